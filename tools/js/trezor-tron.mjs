// Drives our /websocket on the Tron stack (e2e/tron_test.go) through the
// real wallet client, @trezor/blockchain-link 2.6.2's Blockbook worker,
// which has no Tron code: it reads Tron as an EVM account (a string
// "nonce"). Checks getInfo, account info (balance, txs, tokens) and txs
// against the facts the Go test computed from the java-tron double, and
// reports as "note ..." lines what the library cannot read.
//
// usage: node trezor-tron.mjs <base url> <facts.json>
import { readFileSync } from 'node:fs';

import { BlockchainLink, BlockbookWorker, linkVersion, ok, eq, expect, fail, checkCount } from './trezor-harness.mjs';

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node trezor-tron.mjs <base url> <facts.json>');
    process.exit(2);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${e?.stack ?? e}`));
const note = (s) => process.stdout.write(`note ${s}\n`);

eq('@trezor/blockchain-link version', linkVersion, '2.6.2');
const link = new BlockchainLink({ name: 'tron', worker: BlockbookWorker, server: [base], debug: false, timeout: 20_000, pingTimeout: 60_000 });
eq('connect', await link.connect(), true);

const info = await link.getInfo();
eq('getInfo', { shortcut: info.shortcut, blockHeight: info.blockHeight, blockHash: info.blockHash, decimals: info.decimals },
    { shortcut: 'TRX', blockHeight: F.height, blockHash: F.hash, decimals: 6 });
ok('getInfo', `${info.name} at ${info.blockHeight}`);

const acc = F.account;
const basic = await link.getAccountInfo({ descriptor: acc.address, details: 'tokenBalances' });
eq('getAccountInfo basic', { descriptor: basic.descriptor, balance: basic.balance, total: basic.history.total },
    { descriptor: acc.address, balance: acc.balance, total: acc.txids.length });
eq('getAccountInfo tokens', (basic.tokens ?? []).map((t) => [t.contract, t.balance]).sort(), acc.tokens.map((t) => [t.contract, t.balance]).sort());
for (const t of basic.tokens ?? []) {
    // The library types token standards it knows; Tron's TRC20 is passed on as sent.
    expect(t.standard === 'TRC20', `token ${t.contract} standard ${t.standard}`);
}
ok('getAccountInfo basic/tokenBalances', `${acc.address}: ${basic.balance} sun, ${basic.history.total} txs, ${(basic.tokens ?? []).length} tokens`);
if (basic.misc?.nonce !== undefined) note(`misc.nonce ${basic.misc.nonce} (Tron has none; Blockbook sends 0)`);
if (basic.chainExtraData === undefined) note('account chainExtraData (resources, staking, votes) is not read: the worker keeps no such field');

const txs = await link.getAccountInfo({ descriptor: acc.address, details: 'txs', pageSize: 1000 });
eq('getAccountInfo txs', (txs.history.transactions ?? []).map((t) => t.txid), acc.txids);
// The library prices an EVM tx without gasUsed at gasLimit × gasPrice;
// Tron answers carry neither (as Blockbook's), so it reads every fee as 0.
let feesLost = 0;
for (const t of txs.history.transactions ?? []) {
    const f = F.txs[t.txid];
    expect(f !== undefined, `tx ${t.txid} is not the chain's`);
    eq(`tx ${t.txid} block`, { blockHeight: t.blockHeight, blockHash: t.blockHash }, { blockHeight: f.height, blockHash: f.block });
    expect(t.fee === f.fee || t.fee === '0', `tx ${t.txid} fee ${t.fee}, want ${f.fee} or 0`);
    if (t.fee !== f.fee) feesLost++;
}
ok('getAccountInfo txs', `${acc.txids.length} txs, the block of each`);
if (feesLost) note(`fee of ${feesLost} txs read as 0 (the answer's fees is right; the library takes gasLimit × gasPrice when gasUsed is absent)`);
const one = await link.getTransaction(acc.txids[0]);
eq('getTransaction', { txid: one.txid, blockHeight: one.blockHeight }, { txid: acc.txids[0], blockHeight: F.txs[acc.txids[0]].height });
if (one.chainExtraData === undefined && one.details?.chainExtraData === undefined) note('tx chainExtraData (contract type, operation, energy and bandwidth) is not read: transformTransaction drops it');
ok('getTransaction', one.txid);

eq('disconnect', await link.disconnect(), true);
link.dispose();
process.stdout.write(`done ${checkCount()} checks\n`);
process.exit(0);
