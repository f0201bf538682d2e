package mempool

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// The integration tests run the mempool against a real btcd regtest node
// fed by tools/chaingen, with the real btc plugin (RPC, websocket
// notifications), a real index and a real sync worker. Every wait is a
// failure guard, never a speed assertion.

const guard = 90 * time.Second

// stack is a btcd node with a chain of mature coinbases, the btc backend
// pointed at it, and an index kept at its tip by a sync worker.
type stack struct {
	t     *testing.T
	ctx   context.Context
	node  *regtest.Node
	g     *chaingen.Generator
	be    *bchain.Backend
	btc   *btc.Node
	d     *db.DB
	index *db.UtxoIndex
	logs  *syncbuf.Buffer
	log   *slog.Logger

	syncStop func()
}

type stackOpts struct {
	txIndex  bool
	noSyncer bool // the index stays empty until startSyncer
}

func newStack(t *testing.T, o stackOpts) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &stack{t: t, ctx: ctx, logs: &syncbuf.Buffer{}}
	s.log = slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	node, err := regtest.Start(ctx, regtest.Options{Dir: t.TempDir(), TxIndex: o.txIndex})
	if err != nil {
		t.Fatal(err)
	}
	s.node = node
	// btcd maintains its mempool only while its tip is recent.
	step := time.Second
	s.g = chaingen.New(&chaincfg.RegressionNetParams, t.Name(), chaingen.WithTimestamps(time.Now().Add(-400*step), step))
	for range 110 {
		if _, err := s.g.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.g.Submit(ctx, node, 1); err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]any{
		"coin_name": "Regtest", "rpc_url": node.RPCURL, "rpc_user": node.RPCUser, "rpc_pass": node.RPCPass,
		"block_notifications": "btcd",
	})
	if err != nil {
		t.Fatal(err)
	}
	bc, err := bchain.ParseConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.be, err = bchain.NewBackend(bc, bchain.Env{Log: s.log}); err != nil {
		t.Fatal(err)
	}
	s.btc = s.be.Chain.(*btc.Node)
	s.d, err = rocksdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest", Log: s.log})
	if err != nil {
		t.Fatal(err)
	}
	if s.index, err = db.NewUtxoIndex(s.d, s.be.Utxo, 300, db.FilterParams{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if s.syncStop != nil {
			s.syncStop()
		}
		s.d.Close()
		_ = node.Stop()
		if t.Failed() {
			t.Logf("logs:\n%s\nbtcd:\n%s", s.logs.String(), node.LogTail(30))
		}
	})
	if !o.noSyncer {
		s.startSyncer(nil)
	}
	return s
}

// startSyncer runs a sync worker (calling onBlock with its events) and
// waits until the index reaches the node's tip.
func (s *stack) startSyncer(onBlock func(syncer.BlockEvent)) *syncer.Syncer {
	s.t.Helper()
	if s.syncStop != nil {
		s.syncStop()
	}
	w := syncer.New(s.be.Chain, s.index, syncer.Config{PollInterval: 200 * time.Millisecond}, s.log, nil)
	if onBlock != nil {
		w.OnBlock(onBlock)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx, s.be.Notifier) }()
	s.syncStop = func() { cancel(); <-done }
	s.waitIndexed()
	return w
}

// waitIndexed waits until the index tip is the node's tip.
func (s *stack) waitIndexed() {
	s.t.Helper()
	_, want, err := s.btc.BestBlock(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	waitUntil(s.t, "the index reaches the node's tip", func() bool {
		tip, ok, err := s.index.Tip()
		return err == nil && ok && tip.Hash == want
	})
}

// newMempool builds a mempool on the stack's index; cfg fields left zero
// get test defaults (4 workers, no periodic resync during the test).
func (s *stack) newMempool(node Node, cfg Config) *Mempool {
	if node == nil {
		node = s.btc
	}
	if cfg.Workers == 0 {
		cfg.Workers = 4
	}
	if cfg.ResyncInterval == 0 {
		cfg.ResyncInterval = time.Hour
	}
	cfg.Log = s.log
	return New(s.d, node, s.be.Utxo, cfg)
}

// running is a mempool whose Run goroutine the test owns, with every
// announced tx recorded.
type running struct {
	*Mempool
	amu       sync.Mutex
	announced []*Tx
	ch        chan struct{}
}

// run starts m with the stack's tx notifier (or notifier when set) and
// stops it at the end of the test.
func (s *stack) run(m *Mempool, notifier bchain.TxNotifier) *running {
	s.t.Helper()
	r := &running{Mempool: m, ch: make(chan struct{}, 1)}
	m.OnTx(func(tx *Tx) {
		r.amu.Lock()
		r.announced = append(r.announced, tx)
		r.amu.Unlock()
		select {
		case r.ch <- struct{}{}:
		default:
		}
	})
	if notifier == nil {
		notifier = s.be.TxNotifier
	}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, notifier) }()
	s.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				s.t.Errorf("Run = %v", err)
			}
		case <-time.After(guard):
			s.t.Error("Run did not return after cancellation")
		}
	})
	return r
}

// announcedTx returns the first announcement of txid, if any.
func (r *running) announcedTx(txid bchain.Hash) (*Tx, int) {
	r.amu.Lock()
	defer r.amu.Unlock()
	var first *Tx
	n := 0
	for _, tx := range r.announced {
		if tx.Txid == txid {
			if first == nil {
				first = tx
			}
			n++
		}
	}
	return first, n
}

// waitAnnounced waits until every txid was announced through OnTx.
func (r *running) waitAnnounced(t *testing.T, txids ...bchain.Hash) {
	t.Helper()
	deadline := time.After(guard)
	for {
		missing := slices.DeleteFunc(slices.Clone(txids), func(h bchain.Hash) bool { tx, _ := r.announcedTx(h); return tx != nil })
		if len(missing) == 0 {
			return
		}
		select {
		case <-r.ch:
		case <-deadline:
			t.Fatalf("not announced: %v", missing)
		}
	}
}

// waitInSync waits for the first successful load.
func (r *running) waitInSync(t *testing.T) {
	t.Helper()
	waitUntil(t, "the mempool is in sync", func() bool { return r.Status().InSync })
}

// warmNotifications sends small payments until one is announced while no
// resync can run, which proves that the node's tx notifications reach the
// mempool (btcd only notifies clients whose subscription it processed).
func (s *stack) warmNotifications(r *running) {
	s.t.Helper()
	dest, _ := s.g.Address(chaingen.P2WPKH, 1000)
	deadline := time.Now().Add(guard)
	for i := 0; ; i++ {
		tx, err := s.g.CreatePayment([]chaingen.Output{{Address: dest, Value: 5000 + int64(i)}}, 2)
		if err != nil {
			s.t.Fatal(err)
		}
		txid := s.send(tx)
		select {
		case <-r.ch:
		case <-time.After(time.Second):
		}
		if tx, _ := r.announcedTx(txid); tx != nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatal("tx notifications never arrived")
		}
	}
}

// send submits tx to the node's mempool.
func (s *stack) send(tx *wire.MsgTx) bchain.Hash {
	s.t.Helper()
	id, err := s.node.SendRawTransaction(s.ctx, tx)
	if err != nil {
		s.t.Fatalf("sendrawtransaction %s: %v", tx.TxHash(), err)
	}
	h, err := bchain.ParseHash(id)
	if err != nil {
		s.t.Fatal(err)
	}
	return h
}

// mine adds a block of txs to the generator's chain and submits it.
func (s *stack) mine(txs ...*wire.MsgTx) *wire.MsgBlock {
	s.t.Helper()
	b, err := s.g.AddBlock(txs...)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.node.SubmitBlock(s.ctx, b); err != nil {
		s.t.Fatal(err)
	}
	return b
}

// parsedBlock decodes a chaingen block with the plugin's parser.
func (s *stack) parsedBlock(b *wire.MsgBlock, height int32) *bchain.Block {
	s.t.Helper()
	var buf bytes.Buffer
	if err := b.Serialize(&buf); err != nil {
		s.t.Fatal(err)
	}
	blk, err := s.be.Utxo.ParseBlock(buf.Bytes())
	if err != nil {
		s.t.Fatal(err)
	}
	blk.Height = uint32(height)
	return blk
}

func (s *stack) desc(addr string) bchain.AddrDesc {
	s.t.Helper()
	d, err := s.be.Utxo.AddrDescFromAddress(addr)
	if err != nil {
		s.t.Fatal(err)
	}
	return d
}

func txHash(tx *wire.MsgTx) bchain.Hash {
	h := tx.TxHash()
	var out bchain.Hash
	for i := range out {
		out[i] = h[31-i]
	}
	return out
}

// waitUntil polls cond until it holds; the guard only stops a hang.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// addrIndexes returns the indexes under which desc lists txid, or nil.
func addrIndexes(m *Mempool, desc bchain.AddrDesc, txid bchain.Hash) []int32 {
	for _, a := range m.AddrTxs(desc) {
		if a.Txid == txid {
			return a.Indexes
		}
	}
	return nil
}
