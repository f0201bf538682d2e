// The real wallet client, @trezor/blockchain-link (Trezor Suite's), against
// our server on the litecoind chain (e2e/ltc_clients_trezor_test.go): coin
// info, an MWEB block, addresses of every kind, accounts named by
// Litecoin's key versions (Ltub, Mtub, zpub), a push with its mempool and
// confirmation notifications. Facts come from litecoind's ledger.
//
// usage: node trezor-ltc.mjs <base url> <facts.json>
//
// Protocol as trezor-client.mjs: "ok <check>" lines, "need-block <txid>"
// answered "block <height> <hash>", "FAIL …" and exit 1 on a mismatch,
// "done <n> checks" at the end.
import { readFileSync } from 'node:fs';

import {
    BlockchainLink, BlockbookWorker, linkVersion, Recorder, lastAnswer, ok, eq, expect, fail, until, mine, checkCount,
} from './trezor-harness.mjs';
import { utxoKey } from './trezor-expect.mjs';

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node trezor-ltc.mjs <base url> <facts.json>');
    process.exit(2);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${e?.stack ?? e}`));

eq('@trezor/blockchain-link version', linkVersion, '2.6.2');
const link = new BlockchainLink({
    name: 'litecoin-regtest', worker: BlockbookWorker, server: [base], debug: false, timeout: 20_000, pingTimeout: 50_000,
});
const A = new Recorder(link, 'client');
eq('connect', await link.connect(), true);
ok('connect', base);

{
    const info = await link.getInfo();
    const I = F.info;
    eq('getInfo', [info.name, info.shortcut, info.network, info.testnet, info.decimals, info.blockHeight, info.blockHash],
        [I.name, I.shortcut, I.network, I.testnet, I.decimals, I.tipHeight, I.tipHash]);
    ok('getInfo', `${info.name} ${info.shortcut} decimals ${info.decimals} best ${info.blockHeight}`);
}
eq('subscribe block', await link.subscribe({ type: 'block' }), { subscribed: true });

// The MWEB block: its canonical txs, the peg-in and the HogEx included,
// and the node's tx count.
{
    const B = F.block;
    eq(`getBlockHash ${B.height}`, await link.getBlockHash(B.height), B.hash);
    const blk = await link.getBlock(B.height);
    eq(`getBlock ${B.height} (MWEB)`, [blk.hash, blk.height, blk.txCount, (blk.txs ?? []).map((t) => t.txid)],
        [B.hash, B.height, B.txids.length, B.txids]);
    ok('getBlock (MWEB block)', `${B.height}: ${B.txids.length} txs, HogEx last`);
    for (const T of F.txs) {
        const tx = await link.getTransaction(T.txid);
        eq(`getTransaction ${T.txid}`, [tx.txid, tx.blockHeight, tx.blockHash, tx.fee, tx.details.vin.length, tx.details.vout.length],
            [T.txid, T.height, T.blockHash, T.fee, T.ins, T.outs]);
    }
    ok('getTransaction (peg-in, HogExes)', F.txs.map((t) => t.txid.slice(0, 8)).join(', '));
}

// Addresses of every kind, the peg-out recipient among them.
for (const acc of F.accounts) {
    const who = `${acc.kind} ${acc.address}`;
    const info = await link.getAccountInfo({ descriptor: acc.address, details: 'txids', pageSize: 100 });
    // The library drops the txids list in its transform: read it on the wire.
    eq(`getAccountInfo ${who}`, [info.balance, info.history.total, info.history.unconfirmed, lastAnswer('getAccountInfo').txids],
        [acc.balance, acc.txCount, 0, acc.txids]);
    const utxos = await link.getAccountUtxo(acc.address);
    eq(`getAccountUtxo ${who}`, utxos.map((u) => `${utxoKey(u)}:${u.amount}`).sort(), acc.utxos);
    ok(`address (${acc.kind})`, `${acc.address}: balance ${info.balance}, ${acc.txCount} txs, ${utxos.length} utxos`);
}

// Accounts by Litecoin's key versions.
for (const X of F.xpubs) {
    const who = `${X.kind} ${X.descriptor.slice(0, 12)}…`;
    const info = await link.getAccountInfo({ descriptor: X.descriptor, details: 'txids', tokens: 'used', pageSize: 100 });
    eq(`getAccountInfo ${who}`, [info.descriptor, info.balance, info.history.total, lastAnswer('getAccountInfo').txids],
        [X.descriptor, X.balance, X.txCount, X.txids]);
    const used = [...(info.addresses?.used ?? []), ...(info.addresses?.change ?? [])].filter((a) => a.transfers > 0);
    eq(`getAccountInfo ${who} used addresses`, used.map((a) => `${a.address}:${a.path}`).sort(), X.used);
    const utxos = await link.getAccountUtxo(X.descriptor);
    eq(`getAccountUtxo ${who}`, utxos.map((u) => `${utxoKey(u)}:${u.amount}:${u.path}`).sort(), X.utxos);
    ok(`account (${X.kind})`, `${who}: balance ${info.balance}, ${X.txCount} txs, ${used.length} used addresses`);
}

// A push to a fresh address: mempool notification, then the block.
{
    const P = F.push;
    eq('subscribe addresses', await link.subscribe({ type: 'addresses', addresses: [P.address] }), { subscribed: true });
    eq('pushTransaction', await link.pushTransaction({ hex: P.hex }), P.txid);
    const ev = await A.wait('notification', (p) => p.descriptor === P.address && p.tx.txid === P.txid, `notification for ${P.address}`);
    eq('notification (mempool)', [ev.payload.tx.type, ev.payload.tx.amount, ev.payload.tx.blockHeight], ['recv', P.value, -1]);
    ok('pushTransaction + notification', `${P.txid} to ${P.address}`);
    const b = await mine(P.txid);
    const bev = await A.wait('block', (p) => p.blockHeight === b.height, `block notification for ${b.height}`);
    eq('block notification', bev.payload, { blockHeight: b.height, blockHash: b.hash });
    const info = await until(`${P.address} confirmed`, async () => {
        const i = await link.getAccountInfo({ descriptor: P.address, details: 'txids' });
        return i.history.unconfirmed === 0 && i.history.total === 1 ? i : null;
    });
    eq(`getAccountInfo ${P.address} confirmed`, [info.balance, lastAnswer('getAccountInfo').txids], [P.value, [P.txid]]);
    ok('confirmation', `${b.height} ${b.hash}`);
}

expect(A.count('disconnected') === 0, 'the connection dropped');
await link.disconnect();
console.log(`done ${checkCount()} checks`);
process.exit(0);
