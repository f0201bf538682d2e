package projected

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// realisticTx draws a tx: 110-1,000 vB (a few huge ones), fee rates over
// 1-500 sat/vB, mostly low.
func realisticTx(rng *rand.Rand, parents ...bchain.Hash) Tx {
	var h bchain.Hash
	for i := range h {
		h[i] = byte(rng.Uint32())
	}
	vsize := 110 + rng.IntN(891)
	if rng.IntN(1000) == 0 {
		vsize = 10_000 + rng.IntN(90_000)
	}
	rate := 1 + 499*math.Pow(rng.Float64(), 4)
	weight := uint32(4*vsize - rng.IntN(4))
	return Tx{Txid: h, Weight: weight, Size: uint32(vsize + vsize/3), Sigops: uint32(rng.IntN(8)),
		Fee: uint64(rate * float64(vsize)), Parents: parents}
}

// realisticMempool: 90% lone txs, 10% in chains of 2-25, a third of the
// chains being CPFP packages (cheap parents, one rich child).
func realisticMempool(rng *rand.Rand, n int) []Tx {
	txs := make([]Tx, 0, n)
	for len(txs) < n {
		// A chain holds 13.5 txs on average: starting one 0.8% of the
		// time puts 10% of the txs in chains.
		if rng.IntN(1000) >= 8 {
			txs = append(txs, realisticTx(rng))
			continue
		}
		length := 2 + rng.IntN(24)
		cpfp := rng.IntN(3) == 0
		var prev []bchain.Hash
		for i := range length {
			t := realisticTx(rng, prev...)
			if cpfp {
				vsize := uint64(t.Weight+3) / 4
				t.Fee = vsize * uint64(1+rng.IntN(2))
				if i == length-1 {
					t.Fee = vsize * uint64(100+rng.IntN(400))
				}
			}
			txs = append(txs, t)
			prev = []bchain.Hash{t.Txid}
			if rng.IntN(4) == 0 && len(txs) > 1 { // some txs spend two parents
				prev = append(prev, txs[len(txs)-2].Txid)
			}
		}
	}
	return txs[:n]
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkProjected300k measures, on a 300,000-tx mempool: the initial
// build and its heap, the refresh cost per added tx at 10 tx/s with one
// refresh a second, a connected block, and the read latencies.
func BenchmarkProjected300k(b *testing.B) {
	const size, arrivals, rounds = 300_000, 10, 30
	rng := rand.New(rand.NewPCG(42, 1))
	txs := realisticMempool(rng, size)
	var buildMs, heapMB, perTx, refreshMs, refreshCPU, blockMs, blockCPU, blockTxs, feesNs, blocksNs float64
	for range b.N {
		before := heapInUse()
		start := time.Now()
		e := NewEngine(Bitcoin())
		e.Add(txs...)
		s := e.Snapshot()
		buildMs += ms(time.Since(start))
		heapMB += float64(heapInUse()-before) / (1 << 20)
		if len(s.Blocks) != 8 {
			b.Fatalf("%d blocks", len(s.Blocks))
		}

		// 10 tx/s with a refresh each second: Add + Refresh per second.
		start, cpu := time.Now(), cpuMs()
		for range rounds {
			batch := make([]Tx, arrivals)
			for i := range batch {
				batch[i] = realisticTx(rng)
			}
			e.Add(batch...)
			e.Refresh()
		}
		d := time.Since(start)
		perTx += float64(d.Nanoseconds()) / (rounds * arrivals)
		refreshMs += ms(d) / rounds
		refreshCPU += (cpuMs() - cpu) / rounds

		// A block: the first projected block's txs confirm.
		first := e.Snapshot().Blocks[0].Txids
		start, cpu = time.Now(), cpuMs()
		e.ConnectBlock(first)
		e.Refresh()
		blockMs += ms(time.Since(start))
		blockCPU += cpuMs() - cpu
		blockTxs += float64(len(first))

		// Readers: fees and mempool-blocks answers from the snapshot.
		s = e.Snapshot()
		const reads = 10_000
		start = time.Now()
		for range reads {
			_ = e.Snapshot().RecommendedFees(1)
		}
		feesNs += float64(time.Since(start).Nanoseconds()) / reads
		start = time.Now()
		for range reads {
			if _, err := json.Marshal(e.Snapshot().MempoolBlocks()); err != nil {
				b.Fatal(err)
			}
		}
		blocksNs += float64(time.Since(start).Nanoseconds()) / reads
		runtime.KeepAlive(s)
	}
	n := float64(b.N)
	b.ReportMetric(buildMs/n, "ms/build")
	b.ReportMetric(heapMB/n, "MB")
	b.ReportMetric(perTx/n, "ns/tx")
	b.ReportMetric(refreshMs/n, "ms/refresh")
	b.ReportMetric(refreshCPU/n, "cpu-ms/refresh")
	b.ReportMetric(blockMs/n, "ms/block")
	b.ReportMetric(blockCPU/n, "cpu-ms/block")
	b.ReportMetric(blockTxs/n, "txs/block")
	b.ReportMetric(feesNs/n, "ns/fees")
	b.ReportMetric(blocksNs/n, "ns/mempool-blocks")
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// cpuMs is the process's user+system CPU time: on a busy machine it shows
// the work done where wall time shows the waiting too.
func cpuMs() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}
