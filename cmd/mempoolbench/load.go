package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/benchproc"
)

// noBatch hides the node's RawTxs, so that the mempool fetches tx by tx.
type noBatch struct{ mempool.Node }

// measureLoad runs a fresh mempool over the full node mempool: load time,
// blocks connected during the load, memory per tx, unchanged resyncs, and
// blocks connected with the loaded mempool idle.
//
// Long: one measurement whose steps share the timings and the mempool under
// test; in the order they run, it reads as the benchmark's protocol.
func (b *bench) measureLoad(batch bool) error {
	var node mempool.Node = b.btc
	label := "JSON-RPC batches"
	if !batch {
		node, label = noBatch{b.btc}, "one request per tx"
	}
	var fp db.FilterParams
	if b.o.filters {
		fp = db.FilterParams{P: 20, Scripts: db.FilterScriptsTaprootNoOrdinals, ZeroedKey: true}
	}
	fmt.Printf("\n== initial load, %s ==\n", label)
	runtime.GC()
	debug.FreeOSMemory()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore, _ := benchproc.Mem(os.Getpid())

	reg := prometheus.NewRegistry()
	m := mempool.New(b.d, node, b.be.Utxo, mempool.Config{
		Workers: b.o.workers, ResyncInterval: time.Hour, Filter: fp, Log: b.log, Metrics: reg,
	})
	b.mp.Store(m)
	defer b.mp.Store(nil)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); _ = m.Run(ctx, nil) }()
	defer func() { cancel(); <-done }()
	loaded := make(chan time.Duration, 1)
	go func() {
		for !m.Status().InSync {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		loaded <- time.Since(start)
	}()

	time.Sleep(300 * time.Millisecond) // let the load get going
	during, err := b.blockLatency(func() bool { return !m.Status().InSync })
	if err != nil {
		return err
	}
	wall := <-loaded
	st := m.Status()
	first, _ := histogram(reg, "blockbook_mempool_resync_duration_seconds")
	unresolved := gauge(reg, "blockbook_mempool_unresolved_txs")
	fmt.Printf("load: %d txs in %s wall (%s inside the first resync): %.0f tx/s; unresolved inputs: %.0f txs\n",
		st.Size, wall.Round(time.Millisecond), secs(first), float64(st.Size)/wall.Seconds(), unresolved)
	fmt.Printf("block → index tip, during the load:       %s\n", durations(during))

	time.Sleep(2 * time.Second) // the resyncs the blocks asked for
	runtime.GC()
	debug.FreeOSMemory()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rssAfter, hwm := benchproc.Mem(os.Getpid())
	n := float64(max(st.Size, 1))
	fmt.Printf("memory: heap +%.1f MiB (%.0f B/tx), RSS +%.1f MiB (%.0f B/tx), peak RSS %.0f MiB\n",
		float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n,
		float64(rssAfter-rssBefore)/(1<<20), float64(rssAfter-rssBefore)/n, float64(hwm)/(1<<20))

	var resyncs []time.Duration
	for range 3 {
		sum0, count0 := histogram(reg, "blockbook_mempool_resync_duration_seconds")
		m.OnBlock(syncer.BlockEvent{}) // like a bulk commit: a plain resync
		for {
			if _, c := histogram(reg, "blockbook_mempool_resync_duration_seconds"); c > count0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		sum1, _ := histogram(reg, "blockbook_mempool_resync_duration_seconds")
		resyncs = append(resyncs, time.Duration((sum1-sum0)*float64(time.Second)))
		time.Sleep(1100 * time.Millisecond) // block events space resyncs by a second
	}
	fmt.Printf("resync, nothing changed:                 %s\n", durations(resyncs))
	var lists []time.Duration
	for range 3 {
		start := time.Now()
		if _, err := b.btc.MempoolTxids(b.ctx); err != nil {
			return err
		}
		lists = append(lists, time.Since(start))
	}
	fmt.Printf("  of which getrawmempool (RPC + decode): %s\n", durations(lists))

	idle, err := b.blockLatency(nil)
	if err != nil {
		return err
	}
	fmt.Printf("block → index tip, loaded mempool:       %s (each block also triggers a mempool resync)\n", durations(idle))
	return nil
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// histogram returns the sum and count of a histogram in reg.
func histogram(reg *prometheus.Registry, name string) (float64, uint64) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, 0
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleSum(), h.GetSampleCount()
		}
	}
	return 0, 0
}

// gauge returns a gauge's value in reg.
func gauge(reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return 0
}
