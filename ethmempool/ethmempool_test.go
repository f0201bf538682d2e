package ethmempool_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/big"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/eth"
	"github.com/openexplorer/blockbook/ethmempool"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

func word(b []byte) []byte { return common.LeftPadBytes(b, 32) }

func TestPendingTransfersFromCalldata(t *testing.T) {
	contract, from, to := bchain.EthAddress{0xc1}, bchain.EthAddress{0xa1}, bchain.EthAddress{0xb2}
	sel := func(s string) []byte { return common.FromHex(s) }
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	cases := []struct {
		name string
		data []byte
		want string // standard from to id value, or "" for none
	}{
		{"transfer", cat(sel("a9059cbb"), word(to[:]), word([]byte{0x03, 0xe8})), "ERC20 a1 b2 - 1000"},
		{"transferFrom", cat(sel("23b872dd"), word(bchain.EthAddress{0xd4}.AddrDesc()), word(to[:]), word([]byte{7})), "ERC20 d4 b2 - 7"},
		{"ERC721 safeTransferFrom", cat(sel("42842e0e"), word(from[:]), word(to[:]), word([]byte{42})), "ERC721 a1 b2 42 1"},
		{"ERC1155 safeTransferFrom", cat(sel("f242432a"), word(from[:]), word(to[:]), word([]byte{5}), word([]byte{9}), word([]byte{0xa0}), word(nil)), "ERC1155 a1 b2 5 9"},
		{"short", cat(sel("a9059cbb"), word(to[:])), ""},
		{"not an address", cat(sel("a9059cbb"), bytesOf(0xff, 32), word([]byte{1})), ""},
		{"other call", cat(sel("deadbeef"), word(to[:]), word([]byte{1})), ""},
		{"no calldata", nil, ""},
	}
	for _, c := range cases {
		tx := &bchain.EthTx{From: from, To: &contract, Data: c.data}
		got := ""
		if tts := ethmempool.PendingTransfers(tx); len(tts) == 1 {
			tt := tts[0]
			id := "-"
			if tt.TokenID != nil {
				id = tt.TokenID.String()
			}
			got = tt.Standard.String() + " " + common.Bytes2Hex(tt.From[:1]) + " " + common.Bytes2Hex(tt.To[:1]) + " " + id + " " + tt.Value.String()
			if tt.Contract != contract {
				t.Errorf("%s: contract %s", c.name, tt.Contract)
			}
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// The mempool of a dev node holding the scenario's pending txs: filed under
// the ledger's parties with the token transfer the calldata asks for,
// announced when new, gone when mined, and dropped after the timeout.
func TestMempoolFollowsDevNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, err := gethdev.Start(ctx, gethdev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	ledger, err := ethgen.Scenario(ctx, dev)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"coin_name": "Ethereum Regtest", "rpc_url": dev.HTTPURL, "rpc_url_ws": dev.WSURL})
	cfg, err := bchain.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the backend: %v", err)
		}
	})
	node := struct {
		bchain.MempoolSource
		bchain.EthereumChain
	}{b.Mempool, b.Eth}
	now := time.Now()
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	m := ethmempool.New(node, ethmempool.Config{Expiry: time.Hour, Now: clock, Log: quiet})
	if err := m.Resync(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := m.Status(); got.Count != len(ledger.Pending) || !got.InSync {
		t.Fatalf("status %+v, want %d pending txs", got, len(ledger.Pending))
	}
	for addr, a := range ledger.Addresses {
		var got, want []string
		for _, tx := range m.AddrTxs(bchain.AddrDesc(addr.Bytes())) {
			got = append(got, tx.Eth.Hash.String())
		}
		for h := range a.PendingTxs {
			want = append(want, h.Hex()[2:])
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s (%s): pending %v, want %v", addr, a.Name, got, want)
		}
	}
	for _, h := range ledger.Pending {
		tx, ok := m.Tx(bchain.Hash(h))
		if !ok {
			t.Fatalf("pending tx %s missing", h)
		}
		want := ledger.Txs[h].TokenTransfers
		if len(tx.Transfers) != len(want) {
			t.Errorf("tx %s: %d token transfers, want %d", h, len(tx.Transfers), len(want))
			continue
		}
		for i, tt := range tx.Transfers {
			if w := want[i]; tt.Contract != bchain.EthAddress(w.Contract) || tt.To != bchain.EthAddress(w.To) || tt.Value.Cmp(w.Value) != 0 {
				t.Errorf("tx %s: transfer %+v, want %+v", h, tt, w)
			}
		}
	}

	// A new tx is announced; mined txs leave with their block.
	announced := make(chan bchain.Hash, 10)
	m.OnTx(func(tx *ethmempool.Tx) { announced <- tx.Eth.Hash })
	w, err := ethgen.NewWallet(ctx, dev.Client())
	if err != nil {
		t.Fatal(err)
	}
	sent, err := w.Transfer(ctx, ethgen.AccountFromKey("dev", dev.DevKey), common.Address{0xee}, big.NewInt(5), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Resync(ctx, true); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-announced:
		if h != bchain.Hash(sent.Hash()) {
			t.Fatalf("announced %s, want %s", h, sent.Hash())
		}
	default:
		t.Fatal("the new tx was not announced")
	}
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}
	height, hash := dev.Head()
	blk, err := b.Chain.Block(ctx, bchain.Hash(hash), uint32(height))
	if err != nil {
		t.Fatal(err)
	}
	m.OnBlock(blk)
	if n := m.Status().Count; n != 0 {
		t.Fatalf("%d txs left after the block mined them all", n)
	}

	// A tx pending longer than the timeout is dropped and not taken back
	// while the node still lists it.
	stuck, err := w.Transfer(ctx, ethgen.AccountFromKey("dev", dev.DevKey), common.Address{0xef}, big.NewInt(6), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Resync(ctx, false); err != nil || m.Status().Count != 1 {
		t.Fatalf("resync: %v, %d txs", err, m.Status().Count)
	}
	clockMu.Lock()
	now = now.Add(2 * time.Hour)
	clockMu.Unlock()
	for range 2 {
		if err := m.Resync(ctx, false); err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Tx(bchain.Hash(stuck.Hash())); ok || m.Status().Count != 0 {
			t.Fatalf("expired tx kept (%d txs)", m.Status().Count)
		}
	}

	// Run follows the node's pending-tx notifications.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = m.Run(runCtx, b.TxNotifier) }()
	deadline := time.After(30 * time.Second)
	for sentNext := false; ; {
		if !sentNext {
			time.Sleep(200 * time.Millisecond) // let the subscription start
			next, err := w.Transfer(ctx, ethgen.AccountFromKey("dev", dev.DevKey), common.Address{0xf0}, big.NewInt(7), 2)
			if err != nil {
				t.Fatal(err)
			}
			sent, sentNext = next, true
		}
		select {
		case h := <-announced:
			if h == bchain.Hash(sent.Hash()) {
				return
			}
		case <-deadline:
			t.Fatal("a tx sent while Run follows the node was not announced")
		}
	}
}
