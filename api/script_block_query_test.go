package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// Block data of ScriptQueries, edge cases of the script calls, and a reorg
// that changes a script's history.

func TestScriptBlockQueries(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	q := newService(f).Capabilities().Scripts
	ctx := context.Background()
	tip := uint32(f.TipHeight())

	hs, err := q.BlockHeaders(ctx, 0, f.TipHeight()+10)
	if err != nil || len(hs) != f.TipHeight()+1 {
		t.Fatalf("all headers: %d, %v", len(hs), err)
	}
	for h, hdr := range hs {
		if !bytes.Equal(hdr, f.Raw[h][:80]) {
			t.Fatalf("header %d: %x, want %x", h, hdr, f.Raw[h][:80])
		}
	}
	if hs, err := q.BlockHeaders(ctx, tip-1, 5); err != nil || len(hs) != 2 || !bytes.Equal(hs[1], f.Raw[tip][:80]) {
		t.Errorf("headers from tip-1: %d, %v", len(hs), err)
	}
	for _, c := range []struct {
		start uint32
		count int
	}{{tip + 1, 5}, {1 << 31, 1}, {0, 0}, {0, -1}} {
		if hs, err := q.BlockHeaders(ctx, c.start, c.count); err != nil || hs == nil || len(hs) != 0 {
			t.Errorf("headers %d+%d: %v, %v; want none", c.start, c.count, hs, err)
		}
	}

	for h := range f.Raw {
		txids, err := q.BlockTxids(ctx, uint32(h))
		if err != nil {
			t.Fatal(err)
		}
		blk := f.Block(h)
		if len(txids) != len(blk.Transactions) {
			t.Fatalf("block %d: %d txids, want %d", h, len(txids), len(blk.Transactions))
		}
		for pos, tx := range blk.Transactions {
			if txids[pos].String() != tx.TxHash().String() {
				t.Fatalf("block %d pos %d: %s", h, pos, txids[pos])
			}
			gh, gp, ok, err := q.TxPosition(ctx, txids[pos])
			if err != nil || !ok || int(gh) != h || gp != pos {
				t.Fatalf("TxPosition %s: %d %d %v %v, want %d %d", txids[pos], gh, gp, ok, err, h, pos)
			}
		}
	}
	if _, err := q.BlockTxids(ctx, tip+1); err == nil {
		t.Error("txids past the tip")
	} else {
		wantUserError(t, err, "Block height")
	}
	for _, tx := range []*wire.MsgTx{f.PendingPayment, f.PendingChild} {
		txid, _ := bchain.ParseHash(tx.TxHash().String())
		if _, _, ok, err := q.TxPosition(ctx, txid); ok || err != nil {
			t.Errorf("pending tx %s positioned: %v %v", txid, ok, err)
		}
	}
	if _, _, ok, err := q.TxPosition(ctx, bchain.Hash{1, 2, 3}); ok || err != nil {
		t.Errorf("unknown tx positioned: %v %v", ok, err)
	}
}

func TestScriptQueriesEdgeCases(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	q := newService(f).Capabilities().Scripts
	ctx := context.Background()

	// A script no tx has touched: found nowhere, empty everything.
	unknown := append([]byte{0x00, 0x14}, bytes.Repeat([]byte{0x77}, 20)...)
	if s, found, err := q.ScriptByHash(ctx, sha256.Sum256(unknown)); found || s != nil || err != nil {
		t.Errorf("unknown script hash: %x %v %v", s, found, err)
	}
	if h, err := q.ScriptHistory(ctx, unknown, 0); err != nil || h == nil || len(h) != 0 {
		t.Errorf("unknown history: %v %v", h, err)
	}
	if b, err := q.ScriptBalance(ctx, unknown); err != nil || *b != (api.ScriptBalance{}) {
		t.Errorf("unknown balance: %+v %v", b, err)
	}
	if u, err := q.ScriptUtxos(ctx, unknown); err != nil || u == nil || len(u) != 0 {
		t.Errorf("unknown utxos: %v %v", u, err)
	}
	// A data carrier is never indexed; empty and oversized scripts are
	// user errors.
	if h, err := q.ScriptHistory(ctx, []byte{0x6a, 0x01, 0x01}, 10); err != nil || len(h) != 0 {
		t.Errorf("OP_RETURN history: %v %v", h, err)
	}
	for _, bad := range [][]byte{nil, make([]byte, 10_001)} {
		_, err := q.ScriptHistory(ctx, bad, 10)
		wantUserError(t, err, "Invalid script")
		_, err = q.ScriptBalance(ctx, bad)
		wantUserError(t, err, "Invalid script")
		_, err = q.ScriptUtxos(ctx, bad)
		wantUserError(t, err, "Invalid script")
	}

	// The genesis output pays a bare key (P2PK): it is filed under the
	// key's P2PKH script, whose hash finds it; the P2PK script's own hash
	// does not.
	p2pk := f.Block(0).Transactions[0].TxOut[0].PkScript
	desc := f.Parser.OutputAddrDesc(p2pk)
	if bytes.Equal(desc, p2pk) {
		t.Fatal("the genesis output is not P2PK")
	}
	if _, found, _ := q.ScriptByHash(ctx, sha256.Sum256(p2pk)); found {
		t.Error("the P2PK script's own hash is found")
	}
	if s, found, err := q.ScriptByHash(ctx, sha256.Sum256(desc)); !found || err != nil || !bytes.Equal(s, desc) {
		t.Errorf("P2PKH of the genesis key: %x %v %v", s, found, err)
	}
	viaP2PK, err1 := q.ScriptHistory(ctx, p2pk, -1)
	viaP2PKH, err2 := q.ScriptHistory(ctx, desc, -1)
	if err1 != nil || err2 != nil || len(viaP2PK) == 0 || !slices.Equal(viaP2PK, viaP2PKH) {
		t.Errorf("P2PK and P2PKH histories differ: %v %v %v %v", viaP2PK, viaP2PKH, err1, err2)
	}

	// Ethereum-type services do not offer the capability.
	caps := api.Capabilities{Chain: bchain.ChainEthereumType}
	if err := caps.NotSupported(api.CapScripts); !errors.Is(err, api.ErrNotSupported) {
		t.Errorf("not supported: %v", err)
	} else {
		wantUserError(t, err, "Script hashes are not supported for Ethereum-type coins")
	}
}

// altTip is the tip block with its txs replaced by a coinbase paying
// script: a competing block at the same height.
func altTip(t *testing.T, f *apitest.Fixture, script []byte) []byte {
	t.Helper()
	orig := f.Block(f.TipHeight())
	cb := orig.Transactions[0].Copy()
	cb.TxOut = []*wire.TxOut{{Value: 50_000, PkScript: script}}
	alt := wire.NewMsgBlock(&orig.Header)
	alt.Header.Nonce++
	if err := alt.AddTransaction(cb); err != nil {
		t.Fatal(err)
	}
	alt.Header.MerkleRoot = cb.TxHash()
	var buf bytes.Buffer
	if err := alt.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A reorg replacing the tip: histories, script hashes, headers and txids
// follow, and switching back restores the first answers.
func TestScriptQueriesAcrossReorg(t *testing.T) {
	f := apitest.New(t, apitest.Options{NoBlockFilters: true})
	q := newService(f).Capabilities().Scripts
	ctx := context.Background()
	x, err := db.NewUtxoIndex(f.DB, f.Parser, 300, f.BlockFilters)
	if err != nil {
		t.Fatal(err)
	}
	tip := f.TipHeight()
	group := func(b []byte) []byte { return f.Parser.OutputAddrDesc(b) }
	// The descriptors the tip block touches, with their histories before.
	before := map[string][]api.ScriptTx{}
	for _, d := range f.Descs(group) {
		hist, _ := f.ScriptLedger(group, d)
		if len(hist) > 0 && hist[len(hist)-1].Height == tip {
			h, err := q.ScriptHistory(ctx, d, -1)
			if err != nil {
				t.Fatal(err)
			}
			before[string(d)] = h
		}
	}
	if len(before) == 0 {
		t.Fatal("the tip block touches no descriptor")
	}
	fresh := append([]byte{0x00, 0x14}, bytes.Repeat([]byte{0x55}, 20)...)
	altRaw := altTip(t, f, fresh)

	if _, _, err := x.DisconnectTip(nil); err != nil {
		t.Fatal(err)
	}
	altBlk, err := f.Parser.ParseBlock(altRaw)
	if err != nil {
		t.Fatal(err)
	}
	altBlk.Height = uint32(tip)
	if err := x.ConnectBlock(altBlk); err != nil {
		t.Fatal(err)
	}
	for d, h := range before {
		got, err := q.ScriptHistory(ctx, []byte(d), -1)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.DeleteFunc(slices.Clone(h), func(st api.ScriptTx) bool { return int(st.Height) == tip })
		if !slices.Equal(got, want) {
			t.Errorf("%x after the reorg: %v, want %v", d, got, want)
		}
	}
	if got, err := q.ScriptHistory(ctx, fresh, -1); err != nil || len(got) != 1 || got[0].Txid != altBlk.Txs[0].Txid || int(got[0].Height) != tip {
		t.Errorf("the new block's script: %v %v", got, err)
	}
	if _, found, _ := q.ScriptByHash(ctx, sha256.Sum256(fresh)); !found {
		t.Error("the new block's script hash is not found")
	}
	if hs, _ := q.BlockHeaders(ctx, uint32(tip), 1); len(hs) != 1 || !bytes.Equal(hs[0], altRaw[:80]) {
		t.Errorf("tip header after the reorg: %x", hs)
	}
	if ids, _ := q.BlockTxids(ctx, uint32(tip)); len(ids) != 1 || ids[0] != altBlk.Txs[0].Txid {
		t.Errorf("tip txids after the reorg: %v", ids)
	}

	// Back to the original tip.
	if _, _, err := x.DisconnectTip(nil); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := q.ScriptByHash(ctx, sha256.Sum256(fresh)); found {
		t.Error("the orphaned block's script hash is still found")
	}
	orig, err := f.Parser.ParseBlock(f.Raw[tip])
	if err != nil {
		t.Fatal(err)
	}
	orig.Height = uint32(tip)
	if err := x.ConnectBlock(orig); err != nil {
		t.Fatal(err)
	}
	for d, h := range before {
		if got, err := q.ScriptHistory(ctx, []byte(d), -1); err != nil || !slices.Equal(got, h) {
			t.Errorf("%x back on the first branch: %v %v, want %v", d, got, err, h)
		}
	}
}
