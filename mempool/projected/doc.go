// Package projected computes, from the mempool alone, what mempool.space
// computes for its "mempool blocks" and fee recommendations: the projected
// next blocks, their fee statistics, the recommended fees and the Electrum
// fee histogram. It is pure computation: callers feed it txs (fee, weight,
// sigops, in-mempool parents) and read immutable snapshots.
//
// Behaviours reproduced (mempool.space backend, Rust GBT, which is its
// default template builder):
//
//   - Template building (rust/gbt/src/gbt.rs): txs are taken greedily by
//     ancestor score, min(own rate, ancestor-package rate) over
//     sigop-adjusted vsizes, so a low-fee parent is lifted by a high-fee
//     child (CPFP). A selected package goes in parents first (ascending
//     remaining-ancestor count); its descendants lose it as an ancestor and
//     move to a "modified" priority queue with their new score. Every tx of
//     a package gets the package's cluster rate, capped by the cluster rate
//     of any package an ancestor went in with, as its effective fee rate.
//   - Block capacity: a block starts at 4,000 WU and 400 sigops reserved
//     for the coinbase; a package is held aside ("overflow") when
//     weight + 4×package vsize ≥ BlockWeight − 4,000 or sigops would pass
//     80,000; a block closes when the queue is empty or after more than
//     1,000 consecutive misses once it holds more than BlockWeight − 8,000;
//     held-aside packages are candidates again for the next block. The last
//     of the 8 blocks takes everything left. A package that fits no empty
//     block stops the building, as mempool.space does, and is reported in
//     Snapshot.Overflow instead of a block.
//   - Block stats (mempool-blocks.ts, common.ts): blockSize, blockVSize
//     (weight/4, fractional), nTx, totalFees; medianFee and feeRange from
//     calcEffectiveFeeStatistics over the block's first 1.2 × BlockWeight/4
//     vbytes (median = mean rate of the txs within the middle 0.25% of a
//     full block's weight, the unused space lying below the lowest rate, so
//     a half-empty block has median 0; range = [min heuristic, p10, p25,
//     p50, p75, p90, max heuristic], percentiles by tx count without
//     interpolation), or, for a last block heavier than BlockWeight, the
//     OnlineFeeStatsCalculator's 11 band averages (0.5% wide bands at
//     0.25%, 10%, ..., 90%, 99.75% of its weight).
//   - Recommended fees (fee-api.ts): fastest/halfHour/hour from the first
//     three blocks' medians, economy = min(2 × minimum, third median),
//     a floor at the minimum fee, monotone with priority, rounded to the
//     increment (1 sat/vB, or 0.001 for the precise variant with its +0.5 /
//     +0.25 priority offsets).
//   - Fee histogram (romanz/electrs src/mempool.rs): power-of-two fee-rate
//     bins (FeeHistogram). Our Electrum server bins TxRates itself
//     instead, ElectrumX's way (each tx at its package's rate).
//
// Deliberate differences: ties in score are broken by the txid's last four
// bytes (mempool.space's "order") and then the whole txid, instead of a
// per-run uid, so projections do not depend on arrival order; accelerations
// (fee deltas) and the cluster-mempool mode are not implemented.
//
// Capacity: Params gives each coin its block weight (4 × size for
// non-segwit chains). mempool.space's thresholds assume 1,000,000 vB blocks;
// here they scale with BlockWeight (the 500,000 / 950,000 vB recommendation
// thresholds become half and 95% of BlockWeight/4), while the 4,000 WU
// margins and the coinbase reservation stay fixed, as in mempool.space. For
// Bitcoin (and Litecoin) every figure is mempool.space's.
//
// Incrementality: the Engine keeps the tx graph, each tx's ancestor set and
// ancestor totals, and the ancestor-score order across updates; Add and
// Remove touch only the changed txs and their descendants. The template
// walk itself, which is a global greedy process, runs at most once per
// batch of changes, when a snapshot is asked for (Engine.Snapshot) or
// published (Engine.Refresh); readers get immutable snapshots through an
// atomic pointer.
package projected
