// Reads our Esplora REST front through the real client, @mempool/mempool.js,
// calling every Esplora endpoint it has and checking each answer against
// facts the Go test computed from chaingen's ledger (e2e/esplora_test.go).
// Its mempool.space-only /v1 endpoints we do not serve must answer 404.
//
// usage: node esplora-client.mjs <base url> <facts.json>
//
// One "ok <check>" line per check on stdout; a mismatch prints
// "FAIL <what>: got …, want …" and exits 1; success ends with
// "done <n> checks".
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import mempoolJS from '@mempool/mempool.js';

import { fail, ok, done } from './checks.mjs';

const require = createRequire(import.meta.url);
const version = require('@mempool/mempool.js/package.json').version;

const [base, factsPath] = process.argv.slice(2);
if (!base || !factsPath) {
    console.error('usage: node esplora-client.mjs <base url> <facts.json>');
    process.exit(2);
}
const F = JSON.parse(readFileSync(factsPath, 'utf8'));
for (const a of F.addresses) { // Go writes empty lists as null
    for (const k of ['chainTxids', 'mempoolTxids', 'utxos']) a[k] ??= [];
}
F.afterTxids ??= [];
function eq(what, got, want) {
    const g = JSON.stringify(got);
    const w = JSON.stringify(want);
    if (g !== w) fail(`${what}: got ${g}, want ${w}`);
    ok(what);
}
async function status404(what, call) {
    try {
        const got = await call();
        fail(`${what}: answered ${JSON.stringify(got).slice(0, 200)}, want 404`);
    } catch (e) {
        eq(`${what} is 404`, e?.response?.status, 404);
    }
}
process.on('unhandledRejection', (e) => fail(`unhandled rejection: ${e?.stack ?? e}`));

eq('@mempool/mempool.js version', version, '3.0.0');
const url = new URL(base);
const { bitcoin: { addresses, blocks, mempool, transactions, fees, difficulty, lightning } } = mempoolJS({
    hostname: url.host, protocol: url.protocol.replace(':', ''), network: 'main',
});

// Blocks.
eq('blocks.getBlocksTipHeight', await blocks.getBlocksTipHeight(), F.tipHeight);
eq('blocks.getBlocksTipHash', await blocks.getBlocksTipHash(), F.tipHash);
for (const b of F.blocks) {
    eq(`blocks.getBlockHeight ${b.height}`, await blocks.getBlockHeight({ height: b.height }), b.hash);
    const st = await blocks.getBlockStatus({ hash: b.hash });
    eq(`blocks.getBlockStatus ${b.height}`, st, { in_best_chain: true, height: b.height, next_best: b.next || null });
    eq(`blocks.getBlockTxids ${b.height}`, await blocks.getBlockTxids({ hash: b.hash }), b.txids);
    eq(`blocks.getBlockTxid ${b.height}`, await blocks.getBlockTxid({ hash: b.hash, index: b.txids.length - 1 }),
        b.txids[b.txids.length - 1]);
    const txs = await blocks.getBlockTxs({ hash: b.hash, start_index: 0 });
    eq(`blocks.getBlockTxs ${b.height}`, txs.map((t) => t.txid), b.txids.slice(0, 25));
    eq(`blocks.getBlockHeader ${b.height}`, await blocks.getBlockHeader({ hash: b.hash }), b.header);
    const raw = await blocks.getBlockRaw({ hash: b.hash });
    if (typeof raw !== 'string' || raw.length === 0 || raw.length > b.rawLen) fail(`blocks.getBlockRaw ${b.height}: ${raw?.length}`);
    ok(`blocks.getBlockRaw ${b.height}`);
}
// mempool.space's blocks with extras (/v1), where the facts carry them
// (the Bitcoin test's; the Litecoin test's do not).
if (F.mempoolSpace) {
    for (const b of F.blocks) {
        const got = await blocks.getBlock({ hash: b.hash });
        eq(`blocks.getBlock (/v1/block) ${b.height}`,
            [got.id, got.height, got.tx_count, got.extras?.totalFees, got.extras?.reward, got.extras?.header],
            [b.hash, b.height, b.txids.length, b.totalFees, b.reward, b.header]);
    }
    const page = await blocks.getBlocks({ start_height: F.tipHeight });
    eq('blocks.getBlocks (/v1/blocks)', page.map((b) => b.id), F.page);
}

// Transactions.
for (const t of F.txs) {
    const tx = await transactions.getTx({ txid: t.txid });
    eq(`transactions.getTx ${t.txid}`, [tx.txid, tx.fee, tx.vin.length, tx.vout.length, tx.status],
        [t.txid, t.fee, t.vin, t.vout, { confirmed: true, block_height: t.height, block_hash: t.blockHash, block_time: t.blockTime }]);
    eq(`transactions.getTxStatus ${t.txid}`, await transactions.getTxStatus({ txid: t.txid }),
        { confirmed: true, block_height: t.height, block_hash: t.blockHash, block_time: t.blockTime });
    eq(`transactions.getTxHex ${t.txid}`, await transactions.getTxHex({ txid: t.txid }), t.hex);
    const raw = await transactions.getTxRaw({ txid: t.txid });
    if (typeof raw !== 'string' || raw.length === 0) fail(`transactions.getTxRaw ${t.txid}`);
    ok(`transactions.getTxRaw ${t.txid}`);
    const proof = await transactions.getTxMerkleProof({ txid: t.txid });
    eq(`transactions.getTxMerkleProof ${t.txid}`, [proof.block_height, proof.pos], [t.height, t.pos]);
    const mb = await transactions.getTxMerkleBlockProof({ txid: t.txid });
    if (typeof mb !== 'string' || !/^[0-9a-f]+$/.test(mb) || !mb.startsWith(F.blocks.find((b) => b.hash === t.blockHash)?.header ?? mb.slice(0, 160))) {
        fail(`transactions.getTxMerkleBlockProof ${t.txid}: ${mb}`);
    }
    ok(`transactions.getTxMerkleBlockProof ${t.txid}`);
    const outs = await transactions.getTxOutspends({ txid: t.txid });
    eq(`transactions.getTxOutspends ${t.txid}`, outs.map((o) => (o.spent ? o.txid : '')), t.outspends);
    const o0 = await transactions.getTxOutspend({ txid: t.txid, vout: 0 });
    eq(`transactions.getTxOutspend ${t.txid}:0`, o0.spent ? o0.txid : '', t.outspends[0]);
}
for (const id of F.pending) {
    eq(`transactions.getTxStatus pending ${id}`, await transactions.getTxStatus({ txid: id }), { confirmed: false });
    await status404(`transactions.getTxMerkleProof pending ${id}`, () => transactions.getTxMerkleProof({ txid: id }));
}

// Addresses.
for (const a of F.addresses) {
    const st = await addresses.getAddress({ address: a.address });
    eq(`addresses.getAddress ${a.address}`, [st.address, st.chain_stats, st.mempool_stats], [a.address, a.chain_stats, a.mempool_stats]);
    const first = await addresses.getAddressTxs({ address: a.address });
    eq(`addresses.getAddressTxs ${a.address}`, first.map((t) => t.txid),
        [...a.mempoolTxids.slice(0, 50), ...a.chainTxids.slice(0, 25)]);
    const chain = await addresses.getAddressTxsChain({ address: a.address });
    eq(`addresses.getAddressTxsChain ${a.address}`, chain.map((t) => t.txid), a.chainTxids.slice(0, 25));
    const mem = await addresses.getAddressTxsMempool({ address: a.address });
    eq(`addresses.getAddressTxsMempool ${a.address}`, mem.map((t) => t.txid), a.mempoolTxids.slice(0, 50));
    const utxos = await addresses.getAddressTxsUtxo({ address: a.address });
    eq(`addresses.getAddressTxsUtxo ${a.address}`,
        utxos.map((u) => `${u.txid}:${u.vout}:${u.value}:${u.status.block_height ?? 0}`).sort(), a.utxos);
}
if (F.afterAddr) {
    const next = await addresses.getAddressTxs({ address: F.afterAddr, after_txid: F.afterTxid });
    eq(`addresses.getAddressTxs after_txid ${F.afterAddr}`, next.map((t) => t.txid), F.afterTxids);
}

// Mempool.
const txids = await mempool.getMempoolTxids();
for (const id of F.pending) {
    if (!txids.includes(id)) fail(`mempool.getMempoolTxids: ${id} missing from ${txids}`);
}
ok('mempool.getMempoolTxids');
const backlog = await mempool.getMempool();
if (backlog.count !== txids.length || !(backlog.vsize > 0) || !(backlog.total_fee > 0) || !Array.isArray(backlog.fee_histogram)) {
    fail(`mempool.getMempool: ${JSON.stringify(backlog)}`);
}
ok('mempool.getMempool');
const recent = await mempool.getMempoolRecent();
if (!Array.isArray(recent) || recent.length === 0 || recent.length > 10 || recent.some((r) => !txids.includes(r.txid))) {
    fail(`mempool.getMempoolRecent: ${JSON.stringify(recent)}`);
}
ok('mempool.getMempoolRecent');

if (F.mempoolSpace) {
    // mempool.space's fee endpoints, from our projected blocks: the pending
    // txs fit one block; the recommendation's floor is btcd's relay fee.
    const projected = await fees.getFeesMempoolBlocks();
    eq('fees.getFeesMempoolBlocks (/v1) count', projected.length, 1);
    eq('fees.getFeesMempoolBlocks (/v1) block 0', [projected[0].nTx, projected[0].totalFees, projected[0].blockVSize],
        [F.pending.length, F.pendingFees, F.pendingWeight / 4]);
    for (const k of ['blockSize', 'medianFee']) {
        if (typeof projected[0][k] !== 'number') fail(`fees.getFeesMempoolBlocks: ${k} is ${projected[0][k]}`);
    }
    if (!Array.isArray(projected[0].feeRange) || projected[0].feeRange.length !== 7) fail(`feeRange: ${JSON.stringify(projected[0].feeRange)}`);
    const rec = await fees.getFeesRecommended();
    eq('fees.getFeesRecommended (/v1) minimumFee', rec.minimumFee, 1);
    for (const k of ['fastestFee', 'halfHourFee', 'hourFee', 'economyFee']) {
        if (!Number.isInteger(rec[k]) || rec[k] < rec.minimumFee) fail(`fees.getFeesRecommended: ${k} is ${rec[k]}`);
    }
    ok('fees.getFeesRecommended (/v1)');
    // The pending child (2 sat/vB) of the pending parent (3 sat/vB) goes in
    // after it, at its own rate: one ancestor, no descendant.
    {
        const [parent, child] = F.pendingTxs;
        eq('fees.getCPFP (/v1) of the child', await fees.getCPFP({ txid: child.txid }), {
            ancestors: [{ txid: parent.txid, weight: parent.weight, fee: parent.fee }], bestDescendant: null, descendants: [],
            effectiveFeePerVsize: child.fee / (child.weight / 4), sigops: child.sigops, fee: child.fee,
            adjustedVsize: Math.ceil(Math.max(child.weight, 20 * child.sigops) / 4),
        });
        eq('fees.getCPFP (/v1) of a tx not in the mempool', await fees.getCPFP({ txid: F.txs[0].txid }), { ancestors: [] });
    }
    const da = await difficulty.getDifficultyAdjustment();
    eq('difficulty.getDifficultyAdjustment (/v1)', [da.remainingBlocks, da.nextRetargetHeight, da.previousRetarget],
        [2016 - F.tipHeight % 2016, F.tipHeight - F.tipHeight % 2016 + 2016, 0]);
}
// The figures are checked in Go (e2e/mempoolspace_mining_test.go); here the shape mempool.js types.
{
    const hr = await difficulty.getHashrate({ interval: 'all' });
    eq('difficulty.getHashrate (/v1)', [Object.keys(hr), hr.difficulty[0].height, hr.currentHashrate > 0,
        hr.hashrates.every((r) => Object.keys(r).join() === 'timestamp,avgHashrate'), hr.hashrates.length > 1],
        [['hashrates', 'difficulty', 'currentHashrate', 'currentDifficulty'], 0, true, true, true]);
}
await status404('lightning.getNetworkStats (/v1)', () => lightning.getNetworkStats());

// Last: the broadcast changes the mempool the checks above read.
eq('transactions.postTx', await transactions.postTx({ txhex: F.postTx }), F.postTxid);

done();
