package btc

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// These tests drive the real Node, built through bchain.NewBackend, against
// the fixture server answering with Bitcoin Core's recorded shapes (and, for
// the dialect-dependent paths, with btcd's answers).

func TestCoreBackendWiring(t *testing.T) {
	fs := newFixtureServer(t)
	for _, coin := range []string{"Bitcoin", "Regtest"} {
		b, node := newFixtureBackend(t, fs, backendOpts{coin: coin})
		if b.Type != bchain.ChainBitcoinType || b.Chain == nil || b.RawBlocks != node || b.Txs != node ||
			b.Broadcast != node || b.Fees != node || b.Utxo == nil || b.Addresses == nil {
			t.Errorf("%s: backend capabilities not wired to the node: %+v", coin, b)
		}
		if b.Notifier != nil {
			t.Errorf("%s: block_notifications none still gave a notifier %T", coin, b.Notifier)
		}
		if node.rpc.timeout != bchain.DefaultRPCTimeout {
			t.Errorf("%s: rpc timeout without rpc_timeout = %v, want %v", coin, node.rpc.timeout, bchain.DefaultRPCTimeout)
		}
	}
	if len(fs.Calls()) != 0 {
		t.Errorf("building a backend must not call the node: %v", fs.CallKeys())
	}
}

func TestCoreDialectDetection(t *testing.T) {
	t.Run("core", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		_, node := newFixtureBackend(t, fs, backendOpts{})
		for range 3 {
			d, err := node.Dialect(testCtx(t))
			if err != nil || d != dialectCore {
				t.Fatalf("Dialect = %v, %v; want bitcoind", d, err)
			}
		}
		if n := fs.CountCalls("getnetworkinfo"); n != 1 {
			t.Errorf("getnetworkinfo called %d times; the dialect must be detected once", n)
		}
		for _, c := range fs.Calls() {
			if !c.AuthOK {
				t.Errorf("call %s did not carry the configured rpc_user/rpc_pass", c)
			}
		}
	})
	t.Run("btcd", func(t *testing.T) {
		fs := newFixtureServer(t)
		btcdWorld(t, fs)
		_, node := newFixtureBackend(t, fs, backendOpts{})
		d, err := node.Dialect(testCtx(t))
		if err != nil || d != dialectBtcd {
			t.Fatalf("Dialect = %v, %v; want btcd", d, err)
		}
		if d.String() != "btcd" || dialectCore.String() != "bitcoind" || dialectUnknown.String() != "unknown" {
			t.Errorf("dialect names: %s %s %s", d, dialectCore, dialectUnknown)
		}
	})
	t.Run("warmup is not btcd", func(t *testing.T) {
		// Core answers -28 while it loads; that must neither be taken for
		// btcd's "Command unimplemented" nor be remembered.
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		warm := coreFixture(t, "error-warmup")
		fs.on("getnetworkinfo", nil, warm, warm, warm, warm, coreFixture(t, "getnetworkinfo"))
		_, node := newFixtureBackend(t, fs, backendOpts{})
		d, err := node.Dialect(testCtx(t))
		if err == nil || d != dialectUnknown {
			t.Fatalf("Dialect during warm-up = %v, %v; want an error", d, err)
		}
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
		if !strings.Contains(err.Error(), "Loading block index") {
			t.Errorf("warm-up error lacks Core's message: %v", err)
		}
		if n := fs.CountCalls("getnetworkinfo"); n != 4 {
			t.Errorf("warm-up answered %d times, want 1 try + 3 retries", n)
		}
		d, err = node.Dialect(testCtx(t))
		if err != nil || d != dialectCore {
			t.Fatalf("Dialect after warm-up = %v, %v; want bitcoind", d, err)
		}
	})
	t.Run("transport failure is not btcd", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		fs.on("getnetworkinfo", nil, faultReply(faultHTML500), faultReply(faultHTML500), faultReply(faultHTML500),
			faultReply(faultHTML500), coreFixture(t, "getnetworkinfo"))
		_, node := newFixtureBackend(t, fs, backendOpts{})
		if d, err := node.Dialect(testCtx(t)); !errors.Is(err, bchain.ErrNodeUnavailable) || d != dialectUnknown {
			t.Fatalf("Dialect = %v, %v; want ErrNodeUnavailable", d, err)
		}
		if d, err := node.Dialect(testCtx(t)); err != nil || d != dialectCore {
			t.Fatalf("Dialect once the node answers = %v, %v", d, err)
		}
	})
	t.Run("concurrent first use", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		_, node := newFixtureBackend(t, fs, backendOpts{})
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() {
				if d, err := node.Dialect(testCtx(t)); err != nil || d != dialectCore {
					errs <- fmt.Errorf("Dialect = %v, %v", d, err)
				}
				if _, _, err := node.BestBlock(testCtx(t)); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func TestCoreBestBlock(t *testing.T) {
	fs := newFixtureServer(t)
	coreWorld(t, fs)
	b, _ := newFixtureBackend(t, fs, backendOpts{})
	h, hash, err := b.Chain.BestBlock(testCtx(t))
	if err != nil || h != 170 || hash.String() != fxHash170 {
		t.Fatalf("BestBlock = %d %s %v; want 170 %s", h, hash, err, fxHash170)
	}
	wantCalls(t, fs, `getbestblockhash []`, `getblockheader ["`+fxHash170+`",true]`)

	t.Run("garbage hash", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		fs.on("getbestblockhash", nil, resultReply(`"not-a-hash"`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, _, err := b.Chain.BestBlock(testCtx(t))
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
	})
}

func TestCoreBlockHash(t *testing.T) {
	for _, world := range []struct {
		name  string
		setup func(testing.TB, *fixtureServer)
	}{{"core", coreWorld}, {"btcd", btcdWorld}} {
		t.Run(world.name, func(t *testing.T) {
			fs := newFixtureServer(t)
			world.setup(t, fs)
			b, _ := newFixtureBackend(t, fs, backendOpts{})
			hash, err := b.Chain.BlockHash(testCtx(t), 170)
			if err != nil || hash.String() != fxHash170 {
				t.Fatalf("BlockHash(170) = %s, %v", hash, err)
			}
			for _, height := range []uint32{171, 1 << 31, ^uint32(0)} {
				fs.ResetCalls()
				_, err = b.Chain.BlockHash(testCtx(t), height)
				if !errors.Is(err, bchain.ErrBlockNotFound) {
					t.Errorf("BlockHash(%d) = %v; want ErrBlockNotFound", height, err)
				}
				if errors.Is(err, bchain.ErrNodeUnavailable) {
					t.Errorf("BlockHash(%d): an answered out-of-range height is not a node failure: %v", height, err)
				}
				wantCalls(t, fs, fmt.Sprintf("getblockhash [%d]", height))
			}
		})
	}
	t.Run("invalid result", func(t *testing.T) {
		fs := newFixtureServer(t)
		fs.on("getblockhash", []any{5}, resultReply(`"00ff"`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Chain.BlockHash(testCtx(t), 5)
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
	})
}

func TestCoreBlockHeight(t *testing.T) {
	fs := newFixtureServer(t)
	coreWorld(t, fs)
	b, _ := newFixtureBackend(t, fs, backendOpts{})
	h, err := b.Chain.BlockHeight(testCtx(t), mustHash(t, fxHash170))
	if err != nil || h != 170 {
		t.Fatalf("BlockHeight = %d, %v", h, err)
	}
	wantCalls(t, fs, `getblockheader ["`+fxHash170+`",true]`)

	_, err = b.Chain.BlockHeight(testCtx(t), mustHash(t, fxUnknownBlock))
	wantErrIs(t, err, bchain.ErrBlockNotFound)

	for _, bad := range []string{`{}`, `{"height":-1}`, `{"height":4294967296}`, `{"height":"170"}`, `[]`, `"x"`} {
		fs := newFixtureServer(t)
		fs.on("getblockheader", []any{fxHash170, true}, resultReply(bad))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Chain.BlockHeight(testCtx(t), mustHash(t, fxHash170))
		if !errors.Is(err, bchain.ErrNodeUnavailable) {
			t.Errorf("header %s: err = %v; want ErrNodeUnavailable", bad, err)
		}
	}
}

func TestCoreBlock(t *testing.T) {
	fs := newFixtureServer(t)
	coreWorld(t, fs)
	b, _ := newFixtureBackend(t, fs, backendOpts{})
	ctx := testCtx(t)

	blk, err := b.Chain.Block(ctx, mustHash(t, fxHash170), 170)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls(t, fs, `getblock ["`+fxHash170+`",0]`)
	if blk.Hash.String() != fxHash170 || blk.Prev.String() != fxHash169 || blk.Height != 170 ||
		blk.Time != 1231731025 || blk.Size != 490 || len(blk.Txs) != 2 {
		t.Fatalf("block 170 decoded as %+v", blk.BlockHeader)
	}
	if blk.MerkleRoot.String() != "7dac2c5666815c17a3b36427de37bb9d2e2c5ccec3f8633eb91a4205cb4c10ff" ||
		blk.Nonce != 1889418792 || blk.Bits != 0x1d00ffff || blk.Version != 1 {
		t.Errorf("block 170 header fields: %+v", blk)
	}
	cb, pay := blk.Txs[0], blk.Txs[1]
	if cb.Txid.String() != fxCoinbase || !cb.IsCoinbase() || cb.Vout[0].Value != 50e8 {
		t.Errorf("coinbase: %+v", cb)
	}
	if pay.Txid.String() != fxTxid || pay.IsCoinbase() || len(pay.Vout) != 2 ||
		pay.Vout[0].Value != 10e8 || pay.Vout[1].Value != 40e8 ||
		pay.Vin[0].PrevTxid.String() != "0437cd7f8525ceed2324359c2d0ba26006d92d856a9c20fa0241106ee5a597c9" {
		t.Errorf("payment tx: %+v", pay)
	}

	raw, err := b.RawBlocks.RawBlock(ctx, mustHash(t, fxHash170))
	if err != nil || string(raw) != string(fxBlock170(t)) {
		t.Errorf("RawBlock = %d bytes, %v", len(raw), err)
	}

	t.Run("not found", func(t *testing.T) {
		_, err := b.Chain.Block(ctx, mustHash(t, fxUnknownBlock), 5)
		wantErrIs(t, err, bchain.ErrBlockNotFound)
		_, err = b.RawBlocks.RawBlock(ctx, mustHash(t, fxUnknownBlock))
		wantErrIs(t, err, bchain.ErrBlockNotFound)
	})

	// A node (or a proxy in front of it) that answers with another block
	// than the one asked for must not get that block indexed.
	t.Run("wrong block", func(t *testing.T) {
		fs := newFixtureServer(t)
		fs.on("getblock", []any{fxHash170, 0}, coreFixture(t, "getblock-169-raw"))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		blk, err := b.Chain.Block(testCtx(t), mustHash(t, fxHash170), 170)
		if err == nil {
			t.Fatalf("Block accepted block %s for %s", blk.Hash, fxHash170)
		}
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
		if !strings.Contains(err.Error(), fxHash169) || !strings.Contains(err.Error(), fxHash170) {
			t.Errorf("error should name both blocks: %v", err)
		}
	})

	raw170 := hex.EncodeToString(fxBlock170(t))
	for name, result := range map[string]string{
		"invalid hex":    `"zz` + raw170[2:] + `"`,
		"truncated":      `"` + raw170[:len(raw170)/2] + `"`,
		"trailing bytes": `"` + raw170 + `00"`,
		"header only":    `"` + raw170[:160] + `"`,
		"not a string":   `{"hash":"` + fxHash170 + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			fs := newFixtureServer(t)
			fs.on("getblock", []any{fxHash170, 0}, resultReply(result))
			b, _ := newFixtureBackend(t, fs, backendOpts{})
			_, err := b.Chain.Block(testCtx(t), mustHash(t, fxHash170), 170)
			wantErrIs(t, err, bchain.ErrNodeUnavailable)
		})
	}
}

func TestCoreRawTx(t *testing.T) {
	rawTx := fxRawTxHex(t)
	txid, block, zero := mustHash(t, fxTxid), mustHash(t, fxHash170), bchain.Hash{}
	check := func(t *testing.T, raw []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("RawTx: %v", err)
		}
		if hex.EncodeToString(raw) != rawTx {
			t.Fatalf("RawTx returned %x", raw)
		}
		tx, err := NewParser(networks["Bitcoin"].Params).ParseTx(raw)
		if err != nil || tx.Txid != txid {
			t.Fatalf("RawTx bytes decode to %v, %v", tx, err)
		}
	}

	t.Run("core with txindex", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorldWithTxindex(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		raw, err := b.Txs.RawTx(testCtx(t), txid, block)
		check(t, raw, err)
		wantCalls(t, fs, `getrawtransaction ["`+fxTxid+`",0]`)

		fs.ResetCalls()
		_, err = b.Txs.RawTx(testCtx(t), mustHash(t, fxUnknownTx), zero)
		wantErrIs(t, err, bchain.ErrTxNotFound)
	})

	// Without -txindex Core finds a confirmed tx when told its block.
	t.Run("core without txindex uses the block hash", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		raw, err := b.Txs.RawTx(testCtx(t), txid, block)
		check(t, raw, err)
		wantCalls(t, fs,
			`getrawtransaction ["`+fxTxid+`",0]`,
			`getnetworkinfo []`,
			`getrawtransaction ["`+fxTxid+`",0,"`+fxHash170+`"]`)
	})

	t.Run("core without txindex and no block", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Txs.RawTx(testCtx(t), txid, zero)
		wantErrIs(t, err, bchain.ErrTxNotFound)
		wantCalls(t, fs, `getrawtransaction ["`+fxTxid+`",0]`)
	})

	t.Run("core: tx not in the given block", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Txs.RawTx(testCtx(t), mustHash(t, fxUnknownTx), block)
		wantErrIs(t, err, bchain.ErrTxNotFound)
		if errors.Is(err, bchain.ErrNodeUnavailable) {
			t.Errorf("a missing tx is not a node failure: %v", err)
		}
	})

	// btcd has no blockhash argument: the tx is read from the raw block.
	t.Run("btcd reads the raw block", func(t *testing.T) {
		fs := newFixtureServer(t)
		btcdWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		raw, err := b.Txs.RawTx(testCtx(t), txid, block)
		check(t, raw, err)
		wantCalls(t, fs,
			`getrawtransaction ["`+fxTxid+`",0]`,
			`getnetworkinfo []`,
			`getblock ["`+fxHash170+`",0]`)

		fs.ResetCalls()
		raw, err = b.Txs.RawTx(testCtx(t), mustHash(t, fxCoinbase), block)
		if err != nil || len(raw) == 0 {
			t.Fatalf("coinbase from block: %v", err)
		}
		for _, c := range fs.Calls() {
			if c.Method == "getrawtransaction" && strings.Count(c.Params, ",") > 1 {
				t.Errorf("btcd was sent Core's blockhash argument: %s", c)
			}
		}

		_, err = b.Txs.RawTx(testCtx(t), mustHash(t, fxUnknownTx), block)
		wantErrIs(t, err, bchain.ErrTxNotFound)
		_, err = b.Txs.RawTx(testCtx(t), txid, mustHash(t, fxUnknownBlock))
		if err == nil {
			t.Error("RawTx with an unknown block succeeded")
		}
	})

	t.Run("invalid hex", func(t *testing.T) {
		fs := newFixtureServer(t)
		fs.on("getrawtransaction", []any{fxTxid, 0}, resultReply(`"0100zz"`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Txs.RawTx(testCtx(t), txid, zero)
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
	})
}

func TestCoreTxSpecific(t *testing.T) {
	txid, block, zero := mustHash(t, fxTxid), mustHash(t, fxHash170), bchain.Hash{}
	decode := func(t *testing.T, raw json.RawMessage) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("TxSpecific returned %s: %v", raw, err)
		}
		if m["txid"] != fxTxid || m["blockhash"] != fxHash170 || m["hex"] != fxRawTxHex(t) {
			t.Errorf("TxSpecific returned another tx: %s", raw)
		}
		return m
	}

	t.Run("core with txindex", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorldWithTxindex(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		res, err := b.Txs.TxSpecific(testCtx(t), txid, zero)
		if err != nil {
			t.Fatal(err)
		}
		if m := decode(t, res); m["in_active_chain"] != nil {
			t.Errorf("in_active_chain without a blockhash argument: %s", res)
		}
		wantCalls(t, fs, `getrawtransaction ["`+fxTxid+`",1]`)
	})

	t.Run("core without txindex uses the block hash", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		res, err := b.Txs.TxSpecific(testCtx(t), txid, block)
		if err != nil {
			t.Fatal(err)
		}
		if m := decode(t, res); m["in_active_chain"] != true {
			t.Errorf("want Core's in_active_chain: %s", res)
		}
		wantCalls(t, fs,
			`getrawtransaction ["`+fxTxid+`",1]`,
			`getnetworkinfo []`,
			`getrawtransaction ["`+fxTxid+`",1,"`+fxHash170+`"]`)

		_, err = b.Txs.TxSpecific(testCtx(t), txid, zero)
		wantErrIs(t, err, bchain.ErrTxNotFound)
		if err != nil && !strings.Contains(err.Error(), "txindex") {
			t.Errorf("the not-found error should point at -txindex: %v", err)
		}
		_, err = b.Txs.TxSpecific(testCtx(t), mustHash(t, fxUnknownTx), block)
		wantErrIs(t, err, bchain.ErrTxNotFound)
	})

	t.Run("btcd", func(t *testing.T) {
		fs := newFixtureServer(t)
		btcdWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Txs.TxSpecific(testCtx(t), txid, block)
		wantErrIs(t, err, bchain.ErrTxNotFound)
		wantCalls(t, fs, `getrawtransaction ["`+fxTxid+`",1]`, `getnetworkinfo []`)
	})
}

func TestCoreSendRawTx(t *testing.T) {
	raw, _ := hex.DecodeString(fxRawTxHex(t))

	t.Run("accepted", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		txid, err := b.Broadcast.SendRawTx(testCtx(t), raw)
		if err != nil || txid.String() != fxTxid {
			t.Fatalf("SendRawTx = %s, %v", txid, err)
		}
		wantCalls(t, fs, `sendrawtransaction ["`+fxRawTxHex(t)+`"]`)
	})

	for _, tc := range []struct {
		fixture string
		code    int
		msg     string
	}{
		{"sendrawtransaction-missing-inputs", -25, "bad-txns-inputs-missingorspent"},
		{"sendrawtransaction-rejected", -26, "min relay fee not met, 100 < 141"},
		{"sendrawtransaction-already-in-chain", -27, "Transaction already in block chain"},
		{"sendrawtransaction-decode-failed", -22, "TX decode failed. Make sure the tx has at least one input."},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			fs := newFixtureServer(t)
			fs.onAny("sendrawtransaction", coreFixture(t, tc.fixture))
			b, _ := newFixtureBackend(t, fs, backendOpts{})
			txid, err := b.Broadcast.SendRawTx(testCtx(t), raw)
			var rpcErr *bchain.RPCError
			if !errors.As(err, &rpcErr) {
				t.Fatalf("SendRawTx = %s, %v; want *bchain.RPCError", txid, err)
			}
			if rpcErr.Code != tc.code || rpcErr.Message != tc.msg {
				t.Errorf("reject = %d %q; want Core's %d %q", rpcErr.Code, rpcErr.Message, tc.code, tc.msg)
			}
			if errors.Is(err, bchain.ErrNodeUnavailable) {
				t.Errorf("a reject is not a node failure: %v", err)
			}
			if n := len(fs.Calls()); n != 1 {
				t.Errorf("a rejected tx was sent %d times; rejects must not be retried", n)
			}
		})
	}

	t.Run("garbage txid", func(t *testing.T) {
		fs := newFixtureServer(t)
		fs.onAny("sendrawtransaction", resultReply(`"accepted"`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Broadcast.SendRawTx(testCtx(t), raw)
		wantErrIs(t, err, bchain.ErrNodeUnavailable)
	})
}

func TestCoreEstimateFee(t *testing.T) {
	t.Run("feerate", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		for _, conservative := range []bool{false, true} {
			fs.ResetCalls()
			fee, err := b.Fees.EstimateFee(testCtx(t), 2, conservative)
			if err != nil || fee != 12345 {
				t.Fatalf("EstimateFee(2, %v) = %d, %v; want 12345 sat/kvB", conservative, fee, err)
			}
			mode := "ECONOMICAL"
			if conservative {
				mode = "CONSERVATIVE"
			}
			want := []string{`estimatesmartfee [2,"` + mode + `"]`}
			if !conservative {
				want = append([]string{`getnetworkinfo []`}, want...)
			}
			wantCalls(t, fs, want...)
		}
	})

	t.Run("no estimate falls back to relayfee", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		fee, err := b.Fees.EstimateFee(testCtx(t), 6, false)
		if err != nil || fee != 1000 {
			t.Fatalf("EstimateFee = %d, %v; want relayfee 0.00001000 = 1000 sat/kvB", fee, err)
		}
		wantCalls(t, fs, `getnetworkinfo []`, `estimatesmartfee [6,"ECONOMICAL"]`, `getnetworkinfo []`)
	})

	t.Run("exact conversion", func(t *testing.T) {
		for _, tc := range []struct {
			rate string
			sat  int64
		}{
			{"0.00001000", 1000}, {"0.00001", 1000}, {"0.00012345", 12345}, {"0.00020001", 20001},
			{"0.00000001", 1}, {"0.00999999", 999999}, {"0.1", 10000000}, {"1.5e-05", 1500},
		} {
			fs := newFixtureServer(t)
			coreWorld(t, fs)
			fs.on("estimatesmartfee", []any{3, "ECONOMICAL"}, resultReply(`{"feerate":`+tc.rate+`,"blocks":3}`))
			b, _ := newFixtureBackend(t, fs, backendOpts{})
			fee, err := b.Fees.EstimateFee(testCtx(t), 3, false)
			if err != nil || fee != tc.sat {
				t.Errorf("feerate %s → %d, %v; want %d", tc.rate, fee, err, tc.sat)
			}
		}
		// 8-decimal amounts convert exactly: every amount below 1000 sat,
		// then a geometric sample up to the 21M coin supply.
		for sat := int64(0); sat <= 21e14; sat += max(1, sat/997) {
			n := json.Number(fmt.Sprintf("%d.%08d", sat/1e8, sat%1e8))
			if got, err := btcToSat(n); err != nil || got != sat {
				t.Fatalf("btcToSat(%s) = %d, %v", n, got, err)
			}
		}
	})

	t.Run("invalid conf target", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Fees.EstimateFee(testCtx(t), 0, false)
		var rpcErr *bchain.RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != -8 {
			t.Errorf("EstimateFee(0) = %v; want Core's -8", err)
		}
	})

	t.Run("no estimate and no relay fee", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		fs.on("getnetworkinfo", nil, resultReply(`{"version":250000,"relayfee":0}`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		_, err := b.Fees.EstimateFee(testCtx(t), 6, false)
		wantErrIs(t, err, bchain.ErrUnsupported)
	})

	t.Run("btcd", func(t *testing.T) {
		fs := newFixtureServer(t)
		btcdWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		fee, err := b.Fees.EstimateFee(testCtx(t), 2, false)
		if err != nil || fee != 20000 {
			t.Errorf("btcd estimatefee 0.0002 → %d, %v; want 20000", fee, err)
		}
		fee, err = b.Fees.EstimateFee(testCtx(t), 6, false)
		if err != nil || fee != 1000 {
			t.Errorf("btcd estimatefee -1 → %d, %v; want getinfo's relayfee 1000", fee, err)
		}
		if fs.CountCalls("estimatesmartfee") != 0 || fs.CountCalls("getinfo") != 1 {
			t.Errorf("btcd calls: %v", fs.CallKeys())
		}
	})
}

// The mempool's minimum fee: Core's mempoolminfee from getmempoolinfo
// (its minrelaytxfee when that is higher), the relay fee where a node has
// no such answer (btcd's getinfo).
func TestCoreMempoolMinFee(t *testing.T) {
	fs := newFixtureServer(t)
	coreWorld(t, fs)
	fs.on("getmempoolinfo", nil, coreFixture(t, "getmempoolinfo"))
	b, _ := newFixtureBackend(t, fs, backendOpts{})
	if fee, err := b.MinFee.MempoolMinFee(testCtx(t)); err != nil || fee != 2100 {
		t.Errorf("mempoolminfee 0.00002100 → %d, %v; want 2100 sat/kvB", fee, err)
	}
	fs.on("getmempoolinfo", nil, resultReply(`{"loaded":true,"size":0,"bytes":0,"usage":0,"maxmempool":300000000,"mempoolminfee":0.00000500,"minrelaytxfee":0.00001000,"unbroadcastcount":0}`))
	if fee, err := b.MinFee.MempoolMinFee(testCtx(t)); err != nil || fee != 1000 {
		t.Errorf("mempoolminfee below minrelaytxfee → %d, %v; want 1000", fee, err)
	}
	fs.on("getmempoolinfo", nil, resultReply(`{"loaded":true,"size":0,"bytes":0}`))
	if fee, err := b.MinFee.MempoolMinFee(testCtx(t)); err != nil || fee != 1000 {
		t.Errorf("no mempoolminfee → %d, %v; want getnetworkinfo's relayfee 1000", fee, err)
	}

	fs = newFixtureServer(t)
	btcdWorld(t, fs)
	b, _ = newFixtureBackend(t, fs, backendOpts{})
	if fee, err := b.MinFee.MempoolMinFee(testCtx(t)); err != nil || fee != 1000 {
		t.Errorf("btcd → %d, %v; want getinfo's relayfee 1000", fee, err)
	}
	if fs.CountCalls("getmempoolinfo") != 0 {
		t.Errorf("btcd was asked getmempoolinfo: %v", fs.CallKeys())
	}
}

func TestCoreChainInfo(t *testing.T) {
	for _, tc := range []struct {
		name, blockchain, network string
		version, subversion       string
		timeOffset                float64
		warnings                  string
	}{
		{"core 25", "getblockchaininfo", "getnetworkinfo", "250000", "/Satoshi:25.0.0/", -1, ""},
		{"core 28", "getblockchaininfo-v28", "getnetworkinfo-v28", "280000", "/Satoshi:28.0.0/", 0,
			"This is a pre-release test build - use at your own risk - do not use for mining or merchant applications; " +
				"Unknown new rules activated (versionbit 28)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFixtureServer(t)
			fs.on("getblockchaininfo", nil, coreFixture(t, tc.blockchain))
			fs.on("getnetworkinfo", nil, coreFixture(t, tc.network))
			b, _ := newFixtureBackend(t, fs, backendOpts{})
			ci, err := b.Chain.ChainInfo(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			want := bchain.ChainInfo{
				Chain: "main", Blocks: 170, Headers: 842000, BestBlockHash: fxHash170, Difficulty: "1",
				SizeOnDisk: 59712, Version: tc.version, Subversion: tc.subversion, ProtocolVersion: "70016",
				TimeOffset: tc.timeOffset, Warnings: tc.warnings,
			}
			if fmt.Sprintf("%+v", *ci) != fmt.Sprintf("%+v", want) {
				t.Errorf("ChainInfo =\n %+v\nwant\n %+v", *ci, want)
			}
		})
	}

	t.Run("network warnings", func(t *testing.T) {
		fs := newFixtureServer(t)
		fs.on("getblockchaininfo", nil, coreFixture(t, "getblockchaininfo"))
		fs.on("getnetworkinfo", nil, resultReply(`{"version":250000,"subversion":"/Satoshi:25.0.0/","protocolversion":70016,"timeoffset":0,"relayfee":0.00001000,"warnings":"Warning: clock is off"}`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		ci, err := b.Chain.ChainInfo(testCtx(t))
		if err != nil || ci.Warnings != "Warning: clock is off" {
			t.Errorf("ChainInfo warnings = %q, %v", ci.Warnings, err)
		}
	})

	t.Run("btcd", func(t *testing.T) {
		fs := newFixtureServer(t)
		btcdWorld(t, fs)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		ci, err := b.Chain.ChainInfo(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if ci.Chain != "mainnet" || ci.Blocks != 170 || ci.Version != "260200" || ci.Subversion != "/btcd:260200/" ||
			ci.ProtocolVersion != "70002" {
			t.Errorf("btcd ChainInfo = %+v", *ci)
		}
	})

	t.Run("unknown warnings shape", func(t *testing.T) {
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		fs.on("getblockchaininfo", nil, resultReply(`{"chain":"main","blocks":1,"warnings":{"unexpected":true}}`))
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		if _, err := b.Chain.ChainInfo(testCtx(t)); err != nil {
			t.Errorf("an unexpected warnings shape must not fail the status page: %v", err)
		}
	})
}
