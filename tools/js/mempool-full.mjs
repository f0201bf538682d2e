// Every call of @mempool/mempool.js 3.0.0, REST and websocket, against our
// Esplora listener over a mempool of three projected blocks
// (e2e/mempoolspace_full_test.go runs it and sends the txs).
//
// usage: node mempool-full.mjs <base url> <facts.json>
//
// The facts file first holds the CPFP child's address only. The script
// prints "ready" once its websocket tracks that address, RBF and projected
// block 0; the test then fills the mempool,
// writes the facts (from btcd's own mempool) and writes a line. Each
// answer is checked against the facts: "ok <check>" per check, "FAIL
// <what>" and exit 1 on a mismatch, "done <n> checks" at the end. The
// Lightning calls must answer 404 with a JSON error.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';

import mempoolJS from '@mempool/mempool.js';

import { fail, ok, done } from './checks.mjs';

const require = createRequire(import.meta.url);
const version = require('@mempool/mempool.js/package.json').version;
const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node mempool-full.mjs <base url> <facts.json>');
    process.exit(2);
}
process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${e?.stack ?? e}`));
if (version !== '3.0.0') fail(`@mempool/mempool.js version ${version}, want 3.0.0`);

const url = new URL(base);
const { bitcoin: { addresses, blocks, mempool, transactions, fees, difficulty, lightning, websocket } } = mempoolJS({
    hostname: url.host, protocol: url.protocol.replace(':', ''), network: 'main',
});

function eq(what, got, want) {
    const g = JSON.stringify(got);
    const w = JSON.stringify(want);
    if (g !== w) fail(`${what}: got ${g}, want ${w}`);
    ok(what);
}
function check(what, cond, got) {
    if (!cond) fail(`${what}: ${JSON.stringify(got).slice(0, 2000)}`);
    ok(what);
}
// status404: a 404; with a JSON error when jsonError (mempool.space's
// /v1 routes; Esplora's own answer in plain text).
async function status404(what, call, jsonError = false) {
    let got;
    try {
        got = await call();
    } catch (e) {
        const r = e?.response;
        check(`${what} is 404${jsonError ? ' with a JSON error' : ''}`,
            r?.status === 404 && (!jsonError || (typeof r.data === 'object' && typeof r.data?.error === 'string')), [r?.status, r?.data]);
        return;
    }
    fail(`${what}: answered ${JSON.stringify(got).slice(0, 200)}, want 404`);
}

// The websocket: every message is kept; next() takes the keys asked for
// from the first message holding them all that passes test (one push may
// answer several calls); drop() forgets a key's older messages.
const queue = [];
let waiter = null;
const ws = websocket.wsInit();
ws.on('message', (data) => {
    queue.push(JSON.parse(data.toString()));
    if (waiter) waiter();
});
ws.on('close', (code, reason) => fail(`connection closed: ${code} ${reason}`));
ws.on('error', (e) => fail(`websocket error: ${e.message}`));
function drop(key) {
    queue.forEach((m) => delete m[key]);
}
async function next(what, keys, test = () => true) {
    const deadline = Date.now() + 90_000;
    for (;;) {
        const i = queue.findIndex((m) => keys.every((k) => k in m) && test(m));
        if (i >= 0) {
            ok(what);
            const m = queue[i];
            const got = Object.fromEntries(keys.map((k) => [k, m[k]]));
            keys.forEach((k) => delete m[k]);
            if (Object.keys(m).length === 0) queue.splice(i, 1);
            return got;
        }
        if (Date.now() > deadline) fail(`${what}: no message with ${keys}; kept: ${JSON.stringify(queue.map((m) => Object.keys(m)))}`);
        await new Promise((resolve) => {
            waiter = resolve;
            setTimeout(resolve, 500);
        });
        waiter = null;
    }
}

await next('wsInit', ['blocks', 'mempool-blocks', 'mempoolInfo', 'fees', 'da']);
websocket.wsWantData(ws, ['blocks', 'mempool-blocks', 'stats', 'live-2h-chart']);
await next('wsWantData', ['blocks', 'mempool-blocks', 'mempoolInfo', 'fees']);
websocket.wsTrackRbf(ws, false);
await next('wsTrackRbf', ['rbfLatest']);
websocket.wsTrackRbfSummary(ws);
await next('wsTrackRbfSummary', ['rbfLatestSummary']);
websocket.wsTrackMempoolBlock(ws, 0);
await next('wsTrackMempoolBlock 0', ['projected-block-transactions']);
// The CPFP child's address, known before the txs (the facts file holds
// only it until the test rewrites it).
const { addr } = JSON.parse(readFileSync(factsPath, 'utf8'));
websocket.wsTrackAddress(ws, addr);
websocket.wsTrackAddresses(ws, [addr]);
console.log('ready');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
{
    const { value, done: closed } = await lines.next();
    if (closed || value.startsWith('error')) fail(`the test: ${value}`);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
const ids = Object.keys(F.txs).sort();
const rate = (t) => t.fee / (t.weight / 4);

// The RBF pushes of the replacement the test sent after "ready".
{
    const m = await next('wsTrackRbf: rbfLatest holds the replacement', ['rbfLatest'],
        (m) => m.rbfLatest.some((t) => t.tx.txid === F.replacement.txid));
    const tree = m.rbfLatest.find((t) => t.tx.txid === F.replacement.txid);
    eq('rbfLatest: the tree', [tree.tx.fee, tree.replaces.map((r) => [r.tx.txid, r.tx.fee])],
        [F.replacement.fee, [[F.replaced.txid, F.replaced.fee]]]);
    const s = await next('wsTrackRbfSummary: rbfLatestSummary', ['rbfLatestSummary'],
        (m) => m.rbfLatestSummary.some((r) => r.txid === F.replacement.txid));
    const r = s.rbfLatestSummary.find((r) => r.txid === F.replacement.txid);
    eq('rbfLatestSummary: fees and sizes', [r.oldFee, r.newFee, r.mined, r.fullRbf], [F.replaced.fee, F.replacement.fee, false, false]);
    check('rbfLatestSummary: vsizes', Math.abs(r.oldVsize - F.replaced.weight / 4) < 1 && Math.abs(r.newVsize - F.replacement.weight / 4) < 1, r);
}

// Projected blocks: three or more, holding btcd's whole mempool; the two
// first full; medians by rate, highest first.
const pb = await fees.getFeesMempoolBlocks();
check('fees.getFeesMempoolBlocks: at least 3 blocks', pb.length >= 3, pb.map((b) => b.nTx));
eq('fees.getFeesMempoolBlocks: txs and fees of all blocks', [pb.reduce((s, b) => s + b.nTx, 0), pb.reduce((s, b) => s + b.totalFees, 0)],
    [ids.length, F.totalFees]);
check('fees.getFeesMempoolBlocks: blocks 0 and 1 full', pb[0].blockVSize > 950_000 && pb[1].blockVSize > 950_000 &&
    pb.every((b) => b.blockVSize <= 1_000_000 && b.blockSize > b.blockVSize), pb.map((b) => [b.blockSize, b.blockVSize]));
check('fees.getFeesMempoolBlocks: medians and ranges ordered', pb.every((b, i) => b.feeRange.length === 7 &&
    b.feeRange.every((r, j) => j === 0 || r >= b.feeRange[j - 1]) && (i === 0 || b.medianFee <= pb[i - 1].medianFee)),
    pb.map((b) => [b.medianFee, b.feeRange]));
check('the low tx pays below block 0\'s median', rate(F.low) < pb[0].medianFee, [rate(F.low), pb[0].medianFee]);
{
    // mempool.space's fee-api rules (whole sat/vB; btcd's relay fee, 1
    // sat/vB, is the minimum): each median averaged with the previous.
    const opt = (b, nextB, prev) => {
        const use = prev ? (b.medianFee + prev) / 2 : b.medianFee;
        if (b.blockVSize <= 500_000 || b.medianFee < 1) return 1;
        if (b.blockVSize <= 950_000 && !nextB) return Math.max(Math.round(use * (b.blockVSize - 500_000) / 500_000), 1);
        return Math.max(Math.ceil(use), 1);
    };
    const first = opt(pb[0], pb[1], 0);
    const second = opt(pb[1], pb[2], first);
    const third = opt(pb[2], pb[3], second);
    const economy = Math.max(1, Math.min(2, third));
    const hour = Math.max(third, economy);
    const half = Math.max(second, hour);
    eq('fees.getFeesRecommended', await fees.getFeesRecommended(),
        { fastestFee: Math.max(first, half), halfHourFee: half, hourFee: hour, economyFee: economy, minimumFee: 1 });
}
{
    const pkgRate = (F.parent.fee + F.child.fee) / ((F.parent.weight + F.child.weight) / 4);
    const c = await fees.getCPFP({ txid: F.child.txid });
    eq('fees.getCPFP of the child', [c.ancestors, c.descendants, c.bestDescendant, c.fee, c.sigops],
        [[{ txid: F.parent.txid, weight: F.parent.weight, fee: F.parent.fee }], [], null, F.child.fee, F.child.sigops]);
    check('fees.getCPFP of the child: the package rate', Math.abs(c.effectiveFeePerVsize - pkgRate) < 1e-6, c);
    const p = await fees.getCPFP({ txid: F.parent.txid });
    // bestDescendant: null, as mempool.space's cluster CPFP leaves it.
    eq('fees.getCPFP of the parent', [p.ancestors, p.descendants, p.bestDescendant],
        [[], [{ txid: F.child.txid, weight: F.child.weight, fee: F.child.fee }], null]);
    check('fees.getCPFP of the parent: the package rate', Math.abs(p.effectiveFeePerVsize - pkgRate) < 1e-6, p);
}

// Each projected block's txs (track-mempool-block, block by block):
// together exactly btcd's mempool, each block's count and fees as
// mempool-blocks says; the CPFP package together at its package rate.
const where = {};
for (let i = 0; i < pb.length; i++) {
    drop('projected-block-transactions');
    websocket.wsTrackMempoolBlock(ws, i);
    const m = await next(`wsTrackMempoolBlock ${i}`, ['projected-block-transactions'],
        (m) => m['projected-block-transactions'].index === i && !m['projected-block-transactions'].delta);
    const list = m['projected-block-transactions'].blockTransactions;
    for (const [txid, fee, vsize, , r] of list) {
        const f = F.txs[txid];
        if (!f || where[txid] !== undefined || f.fee !== fee || Math.abs(vsize - f.weight / 4) > 0.5) {
            fail(`projected block ${i}: ${JSON.stringify([txid, fee, vsize, r])} (facts ${JSON.stringify(f)}, seen in ${where[txid]})`);
        }
        where[txid] = i;
    }
    eq(`projected block ${i}: count and fees`, [list.length, list.reduce((s, t) => s + t[1], 0)], [pb[i].nTx, pb[i].totalFees]);
}
eq('the projected blocks hold btcd\'s mempool', Object.keys(where).sort(), ids);
check('the CPFP parent goes with its child', where[F.parent.txid] === where[F.child.txid] && where[F.parent.txid] === 0,
    [where[F.parent.txid], where[F.child.txid]]);
check('the low tx is past the first two blocks', where[F.low.txid] >= 2, where[F.low.txid]);
websocket.wsStopTrackingMempoolBlock(ws);

websocket.wsTrackTransaction(ws, F.low.txid);
{
    const m = await next('wsTrackTransaction: txPosition', ['txPosition'], (m) => m.txPosition.txid === F.low.txid);
    eq('txPosition block of the low tx', m.txPosition.position.block, where[F.low.txid]);
}
websocket.wsStopTrackingTransaction(ws);
{
    const a = await next('wsTrackAddress: address-transactions', ['address-transactions'],
        (m) => m['address-transactions'].some((t) => t.txid === F.child.txid));
    check('address-transactions: the child, pending', a['address-transactions'].every((t) => t.txid === F.child.txid && !t.status.confirmed),
        a['address-transactions']);
}
{
    const a = await next('wsTrackAddresses: multi-address-transactions', ['multi-address-transactions'],
        (m) => m['multi-address-transactions'][F.addr]?.mempool?.length === 1);
    eq('multi-address-transactions: the child', a['multi-address-transactions'][F.addr].mempool[0].txid, F.child.txid);
}
websocket.wsStopTrackingAddress(ws);
websocket.wsStopTrackingAddresses(ws);

// live-2h-chart: a sample of this mempool, binned by fee rate.
{
    const m = await next('live-2h-chart of the whole mempool', ['live-2h-chart'], (m) => m['live-2h-chart'].count === ids.length);
    const s = m['live-2h-chart'];
    check('live-2h-chart: vsizes sum to the mempool\'s', Math.abs(s.vsizes.reduce((a, b) => a + b, 0) - F.totalVsize) < ids.length, s);
}
{
    const sum = (bs) => JSON.stringify(bs.map((b) => [b.nTx, b.totalFees, b.medianFee]));
    await next('wsWantData: a mempool-blocks push equal to fees/mempool-blocks', ['mempool-blocks'], (m) => sum(m['mempool-blocks']) === sum(pb));
}
websocket.wsStopTrackingRbf(ws);
websocket.wsStopTrackingRbfSummary(ws);
websocket.wsStopData(ws);

// The mempool routes.
const backlog = await mempool.getMempool();
eq('mempool.getMempool: count and fees', [backlog.count, backlog.total_fee], [ids.length, F.totalFees]);
check('mempool.getMempool: vsize', Math.abs(backlog.vsize - F.totalVsize) < ids.length, [backlog.vsize, F.totalVsize]);
check('mempool.getMempool: fee_histogram', Array.isArray(backlog.fee_histogram) && backlog.fee_histogram.length > 0, backlog.fee_histogram);
eq('mempool.getMempoolTxids', (await mempool.getMempoolTxids()).sort(), ids);
{
    const recent = await mempool.getMempoolRecent();
    check('mempool.getMempoolRecent', recent.length > 0 && recent.length <= 10 &&
        recent.every((r) => F.txs[r.txid]?.fee === r.fee && Math.abs(r.vsize - F.txs[r.txid].weight / 4) < 1), recent);
}

// Transactions: the low tx, the CPFP pair, the replaced tx (gone).
{
    const tx = await transactions.getTx({ txid: F.low.txid });
    eq('transactions.getTx of the low tx', [tx.txid, tx.fee, tx.weight, tx.status.confirmed, tx.vout.length], [F.low.txid, F.low.fee, F.low.weight, false, 1401]);
    eq('transactions.getTxStatus', await transactions.getTxStatus({ txid: F.low.txid }), { confirmed: false });
    eq('transactions.getTxHex', await transactions.getTxHex({ txid: F.low.txid }), F.low.hex);
    const raw = await transactions.getTxRaw({ txid: F.low.txid });
    check('transactions.getTxRaw', typeof raw === 'string' && raw.length > 0, raw?.length);
    await status404('transactions.getTxMerkleProof of a pending tx', () => transactions.getTxMerkleProof({ txid: F.low.txid }));
    await status404('transactions.getTxMerkleBlockProof of a pending tx', () => transactions.getTxMerkleBlockProof({ txid: F.low.txid }));
    const outs = await transactions.getTxOutspends({ txid: F.parent.txid });
    check('transactions.getTxOutspends of the parent', outs[F.childVout].spent && outs[F.childVout].txid === F.child.txid &&
        outs[F.childVout].status.confirmed === false, outs);
    const o = await transactions.getTxOutspend({ txid: F.parent.txid, vout: F.childVout });
    eq('transactions.getTxOutspend of the parent', [o.spent, o.txid, o.vin], [true, F.child.txid, 0]);
    await status404('transactions.getTx of the replaced tx', () => transactions.getTx({ txid: F.replaced.txid }));
}

// Addresses: the child's.
{
    const a = await addresses.getAddress({ address: F.addr });
    eq('addresses.getAddress', [a.chain_stats.tx_count, a.mempool_stats],
        [0, { funded_txo_count: 1, funded_txo_sum: F.childValue, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 1 }]);
    eq('addresses.getAddressTxs', (await addresses.getAddressTxs({ address: F.addr })).map((t) => t.txid), [F.child.txid]);
    eq('addresses.getAddressTxsChain', await addresses.getAddressTxsChain({ address: F.addr }), []);
    eq('addresses.getAddressTxsMempool', (await addresses.getAddressTxsMempool({ address: F.addr })).map((t) => t.txid), [F.child.txid]);
    eq('addresses.getAddressTxsUtxo', (await addresses.getAddressTxsUtxo({ address: F.addr })).map((u) => [u.txid, u.vout, u.value, u.status.confirmed]),
        [[F.child.txid, 0, F.childValue, false]]);
}

// Blocks: the tip.
eq('blocks.getBlocksTipHeight', await blocks.getBlocksTipHeight(), F.tipHeight);
eq('blocks.getBlocksTipHash', await blocks.getBlocksTipHash(), F.tipHash);
eq('blocks.getBlockHeight', await blocks.getBlockHeight({ height: F.tipHeight }), F.tipHash);
{
    const b = await blocks.getBlock({ hash: F.tipHash });
    eq('blocks.getBlock', [b.id, b.height, b.tx_count, b.extras.header], [F.tipHash, F.tipHeight, F.tipTxids.length, F.tipHeader]);
    eq('blocks.getBlocks', (await blocks.getBlocks({ start_height: F.tipHeight }))[0].id, F.tipHash);
}
eq('blocks.getBlockStatus', await blocks.getBlockStatus({ hash: F.tipHash }), { in_best_chain: true, height: F.tipHeight, next_best: null });
eq('blocks.getBlockTxids', await blocks.getBlockTxids({ hash: F.tipHash }), F.tipTxids);
eq('blocks.getBlockTxid', await blocks.getBlockTxid({ hash: F.tipHash, index: 0 }), F.tipTxids[0]);
eq('blocks.getBlockTxs', (await blocks.getBlockTxs({ hash: F.tipHash, start_index: 0 })).map((t) => t.txid), F.tipTxids.slice(0, 25));
eq('blocks.getBlockHeader', await blocks.getBlockHeader({ hash: F.tipHash }), F.tipHeader);
{
    const raw = await blocks.getBlockRaw({ hash: F.tipHash });
    check('blocks.getBlockRaw', typeof raw === 'string' && raw.length > 80, raw?.length);
}

// Difficulty and hashrate (their figures are checked in Go).
{
    const da = await difficulty.getDifficultyAdjustment();
    eq('difficulty.getDifficultyAdjustment', [da.remainingBlocks, da.nextRetargetHeight],
        [2016 - F.tipHeight % 2016, F.tipHeight - F.tipHeight % 2016 + 2016]);
    const hr = await difficulty.getHashrate({ interval: 'all' });
    check('difficulty.getHashrate', hr.currentHashrate > 0 && hr.hashrates.length > 1 && hr.difficulty[0].height === 0,
        [hr.currentHashrate, hr.hashrates.length, hr.difficulty[0]]);
}

// Lightning: no such data here.
const pk = '02' + '11'.repeat(32);
for (const [name, call] of Object.entries({
    getNetworkStats: () => lightning.getNetworkStats(),
    getNodesInCountry: () => lightning.getNodesInCountry({ country: 'ch' }),
    getNodesStatsPerCountry: () => lightning.getNodesStatsPerCountry(),
    getNodesHostedByISP: () => lightning.getNodesHostedByISP({ isp: 16509 }),
    getISPRanking: () => lightning.getISPRanking(),
    getLiquidityRanking: () => lightning.getLiquidityRanking(),
    getConnectivityRanking: () => lightning.getConnectivityRanking(),
    getOldestNodes: () => lightning.getOldestNodes(),
    getNodeStats: () => lightning.getNodeStats({ public_key: pk }),
    getHistoricalNodeStats: () => lightning.getHistoricalNodeStats({ public_key: pk }),
    getChannel: () => lightning.getChannel({ id: '768457472831193089' }),
    getChannelsFromTxIds: () => lightning.getChannelsFromTxIds({ txId: [F.low.txid] }),
    getChannelsFromNodePublicKey: () => lightning.getChannelsFromNodePublicKey({ public_key: pk, status: 'open', index: 0 }),
    getChannelsGeodata: () => lightning.getChannelsGeodata(),
    getChannelsGeodataByPublicKey: () => lightning.getChannelsGeodataByPublicKey({ public_key: pk }),
})) {
    await status404(`lightning.${name}`, call, true);
}

// Last: a broadcast changes the mempool the checks above read.
eq('transactions.postTx', await transactions.postTx({ txhex: F.postTx }), F.postTxid);
ws.send(JSON.stringify({ action: 'ping' }));
await next('served after the stop messages', ['pong']);
ws.removeAllListeners('close');
ws.close();
done();
