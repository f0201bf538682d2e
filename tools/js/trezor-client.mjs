// Drives our websocket API through the real wallet client, Trezor Suite's
// @trezor/blockchain-link (Blockbook worker), and checks every answer against
// facts the Go test computed from its own ledger (e2e_trezor_test.go).
//
// usage: node trezor-client.mjs <base url> <facts.json>
//
// Protocol with the Go test: one "ok <check>" line per check on stdout;
// "need-block <txid>..." asks the Go test to mine a block holding those txs,
// which answers "block <height> <hash>" on stdin. Any mismatch prints
// "FAIL <what>: got …, want …" and exits 1; success ends with "done <n> checks".
import { readFileSync } from 'node:fs';

import {
    BlockchainLink, BlockbookWorker, BlockbookAPI, linkVersion, Recorder, sent, keepAlives, lastAnswer,
    ok, eq, expect, fail, rejects, until, mine, checkCount,
} from './trezor-harness.mjs';
import { checkTx, checkAccountCore, pageOf, utxoKey } from './trezor-expect.mjs';
import { checkXpubAccounts } from './trezor-accounts.mjs';

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node trezor-client.mjs <base url> <facts.json>');
    process.exit(2);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${e?.stack ?? e}`));

eq('@trezor/blockchain-link version', linkVersion, '2.6.2');
ok('library', `@trezor/blockchain-link ${linkVersion}`);

const settings = (name) => ({
    name, worker: BlockbookWorker, server: [base], debug: false,
    timeout: 20_000, pingTimeout: F.pingTimeoutMs,
});
const link = new BlockchainLink(settings('regtest'));
const A = new Recorder(link, 'client A');

// ---- connect and getInfo ------------------------------------------------

eq('connect', await link.connect(), true);
await A.wait('connected', () => true, 'connected event');
ok('connect', `${base} (the library adds /websocket)`);

{
    const info = await link.getInfo();
    const I = F.info;
    eq('getInfo', {
        url: info.url, name: info.name, shortcut: info.shortcut, network: info.network, testnet: info.testnet,
        decimals: info.decimals, blockHeight: info.blockHeight, blockHash: info.blockHash,
        consensusBranchId: info.consensusBranchId,
    }, {
        url: base, name: I.name, shortcut: I.shortcut, network: I.network, testnet: I.testnet,
        decimals: I.decimals, blockHeight: I.tipHeight, blockHash: I.tipHash, consensusBranchId: undefined,
    });
    expect(typeof info.version === 'string' && info.version !== '', `getInfo version ${JSON.stringify(info.version)}`);
    ok('getInfo', `name=${info.name} shortcut=${info.shortcut} network=${info.network} testnet=${info.testnet} decimals=${info.decimals} best=${info.blockHeight} ${info.blockHash}`);
}

// Hold a block subscription from the start: with subscriptions held the
// library keeps the connection alive instead of closing it when idle.
eq('subscribe block', await link.subscribe({ type: 'block' }), { subscribed: true });
ok('subscribe block');

// ---- blocks -------------------------------------------------------------

for (const [height, hash] of Object.entries(F.blockHashes)) {
    eq(`getBlockHash ${height}`, await link.getBlockHash(Number(height)), hash);
}
ok('getBlockHash', `heights ${Object.keys(F.blockHashes).join(', ')}`);
eq('getBlockHash above the tip (Blockbook answers an empty hash)', await link.getBlockHash(F.info.tipHeight + 10), '');
ok('getBlockHash above the tip', 'empty hash');

{
    const B = F.block;
    const blk = await link.getBlock(B.height);
    eq('getBlock', {
        hash: blk.hash, height: blk.height, previousBlockHash: blk.previousBlockHash, time: blk.time,
        txCount: blk.txCount, txids: (blk.txs ?? []).map((t) => t.txid),
    }, { hash: B.hash, height: B.height, previousBlockHash: B.prev, time: B.time, txCount: B.txids.length, txids: B.txids });
    ok('getBlock', `${B.height}: ${B.txids.length} txs`);
}

// ---- accounts -----------------------------------------------------------

for (const acc of F.accounts) {
    const who = `${acc.kind} ${acc.address}`;
    for (const details of ['basic', 'tokens', 'tokenBalances']) {
        const info = await link.getAccountInfo({ descriptor: acc.address, details });
        checkAccountCore(`getAccountInfo ${details} ${who}`, info, acc);
        eq(`getAccountInfo ${details} ${who} transactions`, info.history.transactions, undefined);
        eq(`getAccountInfo ${details} ${who} page (Blockbook sends no paging without a tx list)`, info.page, undefined);
    }
    ok('getAccountInfo basic/tokens/tokenBalances', `${who}: balance ${acc.balance}, ${acc.txCount} txs`);

    const size = 3;
    const page = acc.txCount > size ? 2 : 1;
    const want = pageOf(acc, page, size);
    const ids = await link.getAccountInfo({ descriptor: acc.address, details: 'txids', page, pageSize: size });
    checkAccountCore(`getAccountInfo txids ${who}`, ids, acc);
    eq(`getAccountInfo txids ${who} page ${page}/${size}`, ids.page, want.paging);
    eq(`getAccountInfo txids ${who} transactions`, ids.history.transactions, undefined);
    // The library drops the txids list in its transform; check it on the wire.
    eq(`getAccountInfo txids ${who} page ${page} txids on the wire (newest first)`, lastAnswer('getAccountInfo').txids, want.txids);
    ok('getAccountInfo txids', `${who}: page ${JSON.stringify(ids.page)}, txids = ledger slice ${want.txids.map((t) => t.slice(0, 8)).join(' ')}`);

    const txs = await link.getAccountInfo({ descriptor: acc.address, details: 'txs', page, pageSize: size });
    checkAccountCore(`getAccountInfo txs ${who}`, txs, acc);
    eq(`getAccountInfo txs ${who} page ${page}/${size}`, txs.page, want.paging);
    eq(`getAccountInfo txs ${who} page ${page} txids (newest first)`, txs.history.transactions.map((t) => t.txid), want.txids);
    for (const tx of txs.history.transactions) {
        checkTx(`getAccountInfo txs ${who} tx ${tx.txid}`, tx, acc.txs[tx.txid], tx.txid, acc.address);
    }
    ok('getAccountInfo txs', `${who}: page ${page} of ${want.paging.total} = ledger txids ${want.txids.map((t) => t.slice(0, 8)).join(' ')} (${txs.history.transactions.map((t) => `${t.type} ${t.amount}`).join(', ')})`);

    const last = pageOf(acc, 1e6, size);
    const lastPage = await link.getAccountInfo({ descriptor: acc.address, details: 'txs', page: 1e6, pageSize: size });
    eq(`getAccountInfo txs ${who} page beyond the end (clamped to the last)`, {
        page: lastPage.page, txids: lastPage.history.transactions.map((t) => t.txid),
    }, { page: last.paging, txids: last.txids });

    const utxos = await link.getAccountUtxo(acc.address);
    eq(`getAccountUtxo ${who} set`, utxos.map(utxoKey).sort(), acc.utxos.map(utxoKey).sort());
    const byKey = new Map(acc.utxos.map((u) => [utxoKey(u), u]));
    for (const u of utxos) {
        const w = byKey.get(utxoKey(u));
        eq(`getAccountUtxo ${who} ${utxoKey(u)}`, {
            amount: u.amount, blockHeight: u.blockHeight, confirmations: u.confirmations, coinbase: !!u.coinbase,
        }, { amount: w.value, blockHeight: w.height, confirmations: F.info.tipHeight - w.height + 1, coinbase: w.coinbase });
    }
    for (let i = 1; i < utxos.length; i++) {
        expect(utxos[i - 1].blockHeight >= utxos[i].blockHeight, `getAccountUtxo ${who}: not newest first: ${JSON.stringify(utxos.map((u) => u.blockHeight))}`);
    }
    ok('getAccountUtxo', `${who}: ${utxos.length} utxos`);

    const hist = await link.getAccountBalanceHistory({ descriptor: acc.address });
    let n = 0; let received = 0n; let sentSum = 0n;
    for (let i = 0; i < hist.length; i++) {
        const b = hist[i];
        expect(b.time % 3600 === 0 && (i === 0 || b.time > hist[i - 1].time), `getAccountBalanceHistory ${who}: buckets not hourly and ascending: ${JSON.stringify(hist.map((h) => h.time))}`);
        n += b.txs; received += BigInt(b.received); sentSum += BigInt(b.sent);
    }
    eq(`getAccountBalanceHistory ${who} sums (txs, received, sent)`, [n, received.toString(), sentSum.toString()], [acc.txCount, acc.received, acc.sent]);
    ok('getAccountBalanceHistory', `${who}: ${hist.length} buckets, ${n} txs, received ${received}, sent ${sentSum}`);
}

{
    // A height range: the ledger's txids between two heights, inclusive.
    const acc = F.accounts.reduce((a, b) => (b.txCount > a.txCount ? b : a));
    const from = acc.txs[acc.txids[Math.min(6, acc.txCount - 1)]].height;
    const to = acc.txs[acc.txids[Math.min(2, acc.txCount - 1)]].height;
    const want = acc.txids.filter((id) => acc.txs[id].height >= from && acc.txs[id].height <= to);
    const got = await link.getAccountInfo({ descriptor: acc.address, details: 'txs', from, to, pageSize: 100 });
    eq(`getAccountInfo txs ${acc.address} from ${from} to ${to}`, got.history.transactions.map((t) => t.txid), want);
    ok('getAccountInfo from/to', `${acc.address}: heights ${from}..${to} → ${want.length} txs`);
}

{
    const info = await link.getAccountInfo({ descriptor: F.unused, details: 'txs' });
    eq(`getAccountInfo unused ${F.unused}`, {
        balance: info.balance, availableBalance: info.availableBalance, empty: info.empty,
        total: info.history.total, unconfirmed: info.history.unconfirmed, transactions: info.history.transactions ?? [],
    }, { balance: '0', availableBalance: '0', empty: true, total: 0, unconfirmed: 0, transactions: [] });
    ok('getAccountInfo never-used address', 'empty: true');
    const msg = await rejects('getAccountInfo of a malformed address', link.getAccountInfo({ descriptor: 'bcrt1qnotanaddress', details: 'basic' }));
    ok('getAccountInfo malformed address rejected', JSON.stringify(msg));
}

// ---- HD accounts (xpubs and descriptors) --------------------------------

await checkXpubAccounts(link, F);

// ---- transactions -------------------------------------------------------

for (const t of F.txs) {
    const tx = await link.getTransaction(t.txid);
    checkTx(`getTransaction ${t.txid}`, tx, t, t.txid);
    eq(`getTransaction ${t.txid} hex`, tx.hex, t.hex);
    eq(`getTransaction ${t.txid} lockTime (omitted when 0, as Blockbook)`, tx.lockTime, t.lockTime || undefined);
    eq(`getTransaction ${t.txid} details.size`, tx.details.size, t.size);
    eq(`getTransaction ${t.txid} amount (no owner: the tx value)`, tx.amount, t.totalOut);
    eq(`getTransactionHex ${t.txid}`, await link.getTransactionHex(t.txid), t.hex);
    ok('getTransaction + getTransactionHex', `${t.txid} (${t.ins} in, ${t.outs} out, ${t.size} B, vsize ${t.vsize}, fee ${t.fee})`);
}
{
    const msg = await rejects('getTransaction of an unknown txid', link.getTransaction('00'.repeat(32)));
    ok('getTransaction unknown txid rejected', JSON.stringify(msg));
}

// ---- fees ---------------------------------------------------------------

{
    const blocks = F.fees.map((f) => f.blocks);
    const fees = await link.estimateFee({ blocks, specific: { txsize: F.feeTxSize } });
    eq('estimateFee', fees.map((f) => ({ feePerUnit: f.feePerUnit, feePerTx: f.feePerTx })),
        F.fees.map((f) => ({ feePerUnit: f.feePerUnit, feePerTx: ((BigInt(f.feePerUnit) * BigInt(F.feeTxSize) + 500n) / 1000n).toString() })));
    ok('estimateFee', `blocks ${blocks.join(',')}: ${fees.map((f) => f.feePerUnit).join(', ')} sat/kvB`);
}

// ---- fiat rates (no rate source configured) -----------------------------

{
    const msg = await rejects('getCurrentFiatRates without a rate source', link.getCurrentFiatRates({ currencies: ['usd'] }));
    expect(msg.includes('No tickers found'), `getCurrentFiatRates: error ${JSON.stringify(msg)}, want Blockbook's "No tickers found"`);
    const ts = F.info.tipTime;
    const r = await link.getFiatRatesForTimestamps({ timestamps: [ts], currencies: ['usd'] });
    eq('getFiatRatesForTimestamps (unknown rate is -1)', r, { tickers: [{ ts, rates: { usd: -1 } }] });
    const msg2 = await rejects('getFiatRatesTickersList without a rate source', link.getFiatRatesTickersList({ timestamp: ts }));
    expect(msg2.includes('No tickers found'), `getFiatRatesTickersList: error ${JSON.stringify(msg2)}, want "No tickers found"`);
    eq('subscribe fiatRates', await link.subscribe({ type: 'fiatRates', currency: 'usd' }), { subscribed: true });
    ok('fiat rates', 'getCurrentFiatRates/getFiatRatesTickersList: "No tickers found"; getFiatRatesForTimestamps: -1; subscribe fiatRates');
}

{
    const msg = await rejects('rpcCall (Ethereum only) on a Bitcoin-type server', link.rpcCall({ from: '', to: '', data: '0x' }));
    ok('rpcCall rejected on Bitcoin', JSON.stringify(msg));
}

// ---- push, notifications, mining ---------------------------------------

const [P0, P1] = F.pushes;
const [X, Y] = [P0.outputs[0], P0.outputs[1]];
eq('subscribe addresses', await link.subscribe({ type: 'addresses', addresses: [Y.address] }), { subscribed: true });
eq('subscribe accounts', await link.subscribe({ type: 'accounts', accounts: [{ descriptor: X.address }] }), { subscribed: true });
const subFrames = sent.filter((s) => s.method === 'subscribeAddresses');
eq('subscribeAddresses frames the library sent', subFrames.map((s) => s.params),
    [{ addresses: [Y.address] }, { addresses: [Y.address, X.address] }]);
ok('subscribe addresses + accounts', `the library re-sends the whole list and never asks for newBlockTxs, so no confirmation notifications are due`);
const mempoolSub = await link.subscribe({ type: 'mempool' });
eq('subscribe mempool (server runs with -enablesubnewtx)', mempoolSub, { subscribed: true });
ok('subscribe mempool');

const pushedAt = Date.now();
eq('pushTransaction', await link.pushTransaction({ hex: P0.hex }), P0.txid);
ok('pushTransaction', P0.txid);
for (const [out, kind] of [[X, 'account'], [Y, 'address']]) {
    const ev = await A.wait('notification', (p) => p.descriptor === out.address && p.tx.txid === P0.txid, `mempool notification for ${kind} ${out.address}`);
    const tx = ev.payload.tx;
    eq(`notification ${out.address}`, {
        type: tx.type, amount: tx.amount, blockHeight: tx.blockHeight, fee: tx.fee, vsize: tx.vsize, hex: tx.hex,
    }, { type: 'recv', amount: out.value, blockHeight: -1, fee: P0.fee, vsize: P0.vsize, hex: P0.hex });
    ok(`notification (mempool) for the ${kind}`, `${out.address} recv ${tx.amount}, ${ev.at - pushedAt} ms after pushTransaction was sent`);
}
// ---- Golomb filters (the worker's BlockbookAPI, as the coinjoin backend) --

{
    const FF = F.filters;
    const api = new BlockbookAPI({ url: base, timeout: 20_000 });
    await api.connect();
    const head = { P: FF.P, M: FF.M, zeroedKey: FF.zeroedKey };
    eq('getBlockFilter (library default scriptType taproot-noordinals)', await api.getBlockFilter(FF.tipHash),
        { ...head, blockFilter: FF.tipFilter });
    eq('getBlockFiltersBatch', await api.getBlockFiltersBatch(FF.bestKnown, 10), { ...head, blockFiltersBatch: FF.batch });
    const msg = await rejects('getMempoolFilters with the library default scriptType',
        api.getMempoolFilters(0));
    expect(msg.includes('Unsupported script filter taproot-noordinals'), `getMempoolFilters default scriptType error: ${msg}`);
    const mf = await until(`getMempoolFilters lists ${P0.txid}`, async () => {
        const r = await api.getMempoolFilters(0, { scriptType: 'taproot' });
        return r.entries?.[P0.txid] ? r : null;
    });
    eq('getMempoolFilters parameters', [mf.P, mf.M, mf.zeroedKey], [20, 1048576, false]);
    expect(/^[0-9a-f]+$/.test(mf.entries[P0.txid]), `mempool filter of ${P0.txid}: ${mf.entries[P0.txid]}`);
    await api.disconnect();
    ok('filters', `block filter of the tip, a batch of ${FF.batch.length}, the mempool filter of ${P0.txid.slice(0, 8)} (taproot output)`);
}

{
    const ev = await A.wait('mempool', (p) => p.txid === P0.txid, 'subscribeNewTransaction notification');
    eq('mempool event hex', ev.payload.hex, P0.hex);
    ok('mempool event', `${P0.txid}`);
}
{
    const info = await until(`getAccountInfo ${X.address} shows the pending tx`, async () => {
        const i = await link.getAccountInfo({ descriptor: X.address, details: 'txs' });
        return i.history.unconfirmed === 1 ? i : null;
    });
    eq(`getAccountInfo ${X.address} pending`, {
        balance: info.balance, availableBalance: info.availableBalance, empty: info.empty, total: info.history.total,
        txids: info.history.transactions.map((t) => t.txid), blockHeight: info.history.transactions[0].blockHeight,
    }, { balance: '0', availableBalance: X.value, empty: false, total: 0, txids: [P0.txid], blockHeight: -1 });
    const utxos = await link.getAccountUtxo(X.address);
    eq(`getAccountUtxo ${X.address} pending`, utxos.map((u) => ({ ...u, address: undefined, path: undefined })),
        [{ txid: P0.txid, vout: X.vout, amount: X.value, blockHeight: undefined, confirmations: 0, coinbase: undefined }]);
    ok('pending tx in getAccountInfo/getAccountUtxo', `${X.address}: availableBalance ${info.availableBalance}, unconfirmed 1`);
}

const blocksBefore = A.count('block');
const b1 = await mine(P0.txid);
{
    const ev = await A.wait('block', (p) => p.blockHeight === b1.height, `block notification for ${b1.height}`);
    eq('block notification', ev.payload, { blockHeight: b1.height, blockHash: b1.hash });
    ok('block notification', `${b1.height} ${b1.hash}`);
    const info = await link.getInfo();
    eq('getInfo after the block', [info.blockHeight, info.blockHash], [b1.height, b1.hash]);
    const acc = await until(`getAccountInfo ${X.address} confirmed`, async () => {
        const i = await link.getAccountInfo({ descriptor: X.address, details: 'txs' });
        return i.history.unconfirmed === 0 ? i : null;
    });
    const tx = acc.history.transactions[0];
    eq(`getAccountInfo ${X.address} confirmed`, {
        balance: acc.balance, availableBalance: acc.availableBalance, total: acc.history.total,
        txids: acc.history.transactions.map((t) => t.txid), blockHeight: tx.blockHeight, blockHash: tx.blockHash,
        type: tx.type, amount: tx.amount,
    }, { balance: X.value, availableBalance: X.value, total: 1, txids: [P0.txid], blockHeight: b1.height, blockHash: b1.hash, type: 'recv', amount: X.value });
    const utxos = await link.getAccountUtxo(X.address);
    eq(`getAccountUtxo ${X.address} confirmed`, utxos.map((u) => [u.txid, u.vout, u.amount, u.blockHeight, u.confirmations]),
        [[P0.txid, X.vout, X.value, b1.height, 1]]);
    const hist = await link.getAccountBalanceHistory({ descriptor: X.address });
    eq(`getAccountBalanceHistory ${X.address}`, hist.map((h) => [h.txs, h.received, h.sent]), [[1, X.value, '0']]);
    ok('after mining', `${X.address}: balance ${acc.balance}, utxo confirmed at ${b1.height}, balance history 1 bucket`);
}

// ---- keep-alive ---------------------------------------------------------

{
    const before = { pings: keepAlives.length, frames: sent.length, conn: A.count('connected'), disc: A.count('disconnected') };
    // Stay idle with subscriptions held until the library has sent two
    // keep-alive requests and got both answered (it sends one after
    // pingTimeout ms without traffic); the wait is bounded by the guard only.
    const start = Date.now();
    const pings = await until('two answered keep-alive requests', async () => {
        if (A.count('disconnected') > before.disc) fail(`the connection closed while idle with subscriptions held (keep-alives so far: ${JSON.stringify(keepAlives.slice(before.pings))})`);
        const p = keepAlives.slice(before.pings);
        return p.length >= 2 && p.every((k) => k.result || k.error) ? p : null;
    });
    const held = Date.now() - start;
    for (const p of pings) {
        expect(!p.error, `keep-alive request failed: ${p.error}`);
        eq('keep-alive answer (getBlockHash height 1)', p.result, { hash: F.blockHashes['1'] });
    }
    const frames = sent.slice(before.frames).map((f) => `${f.method} ${JSON.stringify(f.params)}`);
    eq('frames the library sent while idle', frames.slice(0, 2), ['getBlockHash {"height":1}', 'getBlockHash {"height":1}']);
    eq('connection events while idle', [A.count('connected') - before.conn, A.count('disconnected') - before.disc], [0, 0]);
    const info = await link.getInfo();
    eq('getInfo after idling', info.blockHeight, b1.height);
    ok('keep-alive', `pingTimeout ${F.pingTimeoutMs} ms: ${pings.length} keep-alive getBlockHash requests answered in ${held} ms idle; the connection stayed open`);
}

// ---- unsubscribe --------------------------------------------------------

eq('unsubscribe accounts', await link.unsubscribe({ type: 'accounts', accounts: [{ descriptor: X.address }] }), { subscribed: true });
eq('frame after unsubscribing the account', sent.filter((s) => s.method === 'subscribeAddresses').at(-1).params, { addresses: [Y.address] });
eq('unsubscribe addresses', await link.unsubscribe({ type: 'addresses' }), { subscribed: false });
eq('unsubscribe block', await link.unsubscribe({ type: 'block' }), { subscribed: false });
eq('unsubscribe mempool', await link.unsubscribe({ type: 'mempool' }), { subscribed: false });
eq('unsubscribe fiatRates', await link.unsubscribe({ type: 'fiatRates' }), { subscribed: false });
ok('unsubscribe', 'accounts (re-subscribes the rest), addresses, block, mempool, fiatRates');
const after = { block: A.count('block'), note: A.count('notification'), mempool: A.count('mempool') };

// A second client still subscribed sees the next tx and block; the first,
// unsubscribed, must not.
const link2 = new BlockchainLink(settings('regtest-2'));
const B = new Recorder(link2, 'client B');
eq('client B subscribe block', await link2.subscribe({ type: 'block' }), { subscribed: true });
eq('client B subscribe addresses', await link2.subscribe({ type: 'addresses', addresses: [X.address] }), { subscribed: true });
eq('client B pushTransaction', await link2.pushTransaction({ hex: P1.hex }), P1.txid);
await B.wait('notification', (p) => p.descriptor === X.address && p.tx.txid === P1.txid, `client B notification for ${P1.txid}`);
const b2 = await mine(P1.txid);
await B.wait('block', (p) => p.blockHeight === b2.height, `client B block notification ${b2.height}`);
await link.getInfo(); // a round trip on A after B got everything
eq('client A events after unsubscribing (block, notification, mempool)',
    [A.count('block') - after.block, A.count('notification') - after.note, A.count('mempool') - after.mempool], [0, 0, 0]);
ok('unsubscribed client gets nothing', `client B got ${P1.txid.slice(0, 8)} and block ${b2.height}; client A nothing`);

// The library asked for no confirmations (no newBlockTxs): each pushed tx
// was notified once per subscribed address, in the mempool only.
eq(`notifications of ${P0.txid} to client A`, A.count('notification', (p) => p.tx.txid === P0.txid), 2);
eq(`block notifications to client A before unsubscribing`, A.count('block') - blocksBefore, 1);
ok('no confirmation notifications without newBlockTxs', `${P0.txid.slice(0, 8)}: one mempool notification per address`);

eq('client B disconnect', await link2.disconnect(), true);
eq('disconnect', await link.disconnect(), true);
link2.dispose();
link.dispose();
ok('disconnect');
process.stdout.write(`done ${checkCount()} checks\n`);
process.exit(0);
