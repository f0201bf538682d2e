// Private sending through @trezor/blockchain-link (Blockbook worker, EVM
// mode): pushTransaction goes to the alternative provider (a second geth the
// public node does not see), the server shows the tx pending and the
// sender's next nonce from the relay before the public node knows it; the
// relay's refusal reaches the client without the provider's URL; and
// sendTransaction with disableAlternativeRpc goes to the public node.
// The Go test (e2e/sendrelay_test.go) answers "where <txid>" with
// relay-only/public-only/both/none and "need-block" by sealing on the relay.
//
// usage: node trezor-sendrelay.mjs <base url> <facts.json>
// facts: {sender, nonceBefore, privateHex, privateTxid, underpricedHex,
//         directHex, directTxid, relayAddr}
import { readFileSync } from 'node:fs';

import { BlockchainLink, BlockbookWorker, BlockbookAPI, ask, mine, until, rejects, ok, eq, expect, checkCount } from './trezor-harness.mjs';

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node trezor-sendrelay.mjs <base url> <facts.json>');
    process.exit(2);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
const link = new BlockchainLink({ name: 'regtest-eth', worker: BlockbookWorker, server: [base], debug: false, timeout: 20_000 });
eq('connect', await link.connect(), true);

const before = await link.getAccountInfo({ descriptor: F.sender, details: 'txids' });
eq('nonce before', before.misc?.nonce, F.nonceBefore);
eq('pushTransaction through the relay', await link.pushTransaction({ hex: F.privateHex }), F.privateTxid);
eq('where the private tx is', await ask(`where ${F.privateTxid}`), 'relay-only');
const pending = await until('the private tx pending', async () => {
    const i = await link.getAccountInfo({ descriptor: F.sender, details: 'txs' });
    return i.history.unconfirmed === 1 ? i : null;
});
eq('newest tx', pending.history.transactions?.map((t) => [t.txid, t.blockHeight])[0], [F.privateTxid, -1]);
eq('nonce from the relay', pending.misc?.nonce, String(Number(F.nonceBefore) + 1));
ok('private send', `${F.privateTxid} pending on the relay only; nonce ${pending.misc.nonce}`);

const msg = await rejects('underpriced replacement', link.pushTransaction({ hex: F.underpricedHex }));
expect(/underpriced/.test(msg), `the relay's refusal: ${msg}`);
expect(!msg.includes(F.relayAddr), `the refusal names the provider: ${msg}`);
ok('relay refusal', msg);

const api = new BlockbookAPI({ url: base, timeout: 20_000 });
await api.connect();
const direct = await api.send('sendTransaction', { hex: F.directHex, disableAlternativeRpc: true });
eq('sendTransaction with disableAlternativeRpc', direct.result, F.directTxid);
eq('where the direct tx is', await ask(`where ${F.directTxid}`), 'public-only');
ok('direct send', F.directTxid);
await api.disconnect();

const blk = await mine(F.privateTxid);
const mined = await until('the private tx mined', async () => {
    const i = await link.getAccountInfo({ descriptor: F.sender, details: 'txs' });
    return i.history.unconfirmed === 0 ? i : null;
});
const tx = mined.history.transactions.find((t) => t.txid === F.privateTxid);
expect(tx && tx.blockHeight === blk.height, `the private tx after the relay's block ${blk.height}: ${JSON.stringify(tx)}`);
eq('nonce after mining', mined.misc?.nonce, String(Number(F.nonceBefore) + 1));
ok('mined', `block ${blk.height}`);
await link.disconnect();
process.stdout.write(`done ${checkCount()} checks\n`);
process.exit(0);
