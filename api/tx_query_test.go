package api_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// serialized returns a tx's bytes with witness.
func serialized(t *testing.T, tx *wire.MsgTx) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wantOutputAddresses checks how an output's script is shown: its address,
// the OP_RETURN text or hex, or nothing.
func wantOutputAddresses(t *testing.T, f *apitest.Fixture, what string, vo api.Vout, script []byte) {
	t.Helper()
	switch addr := f.Address(script); {
	case addr != "":
		if !slices.Equal(vo.Addresses, []string{addr}) || !vo.IsAddress {
			t.Errorf("%s: addresses %v %v, want %s", what, vo.Addresses, vo.IsAddress, addr)
		}
	case len(script) > 0 && script[0] == txscript.OP_RETURN:
		if len(vo.Addresses) != 1 || !strings.HasPrefix(vo.Addresses[0], "OP_RETURN") || vo.IsAddress {
			t.Errorf("%s: data output shown as %v %v", what, vo.Addresses, vo.IsAddress)
		}
	default:
		if len(vo.Addresses) != 0 || vo.IsAddress {
			t.Errorf("%s: output without address shown as %v %v", what, vo.Addresses, vo.IsAddress)
		}
	}
}

// Every confirmed tx: block, values, fees, addresses and spends as the
// chain has them.
func TestTxMatchesChain(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	tip := f.TipHeight()
	for txid, info := range f.Ledger.Txs {
		got, err := svc.Tx(ctx, txid)
		if err != nil {
			t.Fatalf("%s: %v", txid, err)
		}
		ref := f.Tx(txid)
		h := int(info.Height)
		raw := serialized(t, ref.Tx)
		vsize := (ref.Tx.SerializeSizeStripped()*3 + len(raw) + 3) / 4
		if got.Txid != txid || got.BlockHeight != int64(h) || got.BlockHash != f.BlockHash(h) ||
			got.Confirmations != uint32(tip-h+1) || got.BlockTime != f.Block(h).Header.Timestamp.Unix() ||
			got.Hex != hex.EncodeToString(raw) || got.Size != len(raw) || got.VSize != vsize ||
			got.Version != ref.Tx.Version || got.LockTime != ref.Tx.LockTime || got.Rbf {
			t.Fatalf("%s: header fields %+v", txid, got)
		}
		if len(got.Vin) != len(ref.Tx.TxIn) || len(got.Vout) != len(ref.Tx.TxOut) {
			t.Fatalf("%s: %d/%d inputs, %d/%d outputs", txid, len(got.Vin), len(ref.Tx.TxIn), len(got.Vout), len(ref.Tx.TxOut))
		}
		var in, out int64
		for i, vin := range got.Vin {
			ti := ref.Tx.TxIn[i]
			if vin.N != i || vin.Sequence != int64(ti.Sequence) {
				t.Errorf("%s vin %d: n %d sequence %d", txid, i, vin.N, vin.Sequence)
			}
			if info.Position == 0 {
				if vin.Coinbase != hex.EncodeToString(ti.SignatureScript) || vin.Value != nil || vin.Txid != "" {
					t.Errorf("%s: coinbase input %+v", txid, vin)
				}
				continue
			}
			prev := ref.Prevouts[i]
			in += prev.Value
			if vin.Txid != ti.PreviousOutPoint.Hash.String() || vin.Vout != ti.PreviousOutPoint.Index {
				t.Errorf("%s vin %d: spends %s:%d", txid, i, vin.Txid, vin.Vout)
			}
			wantAmount(t, txid+" vin value", vin.Value, prev.Value)
			if addr := f.Address(prev.PkScript); addr != "" && (!slices.Equal(vin.Addresses, []string{addr}) || !vin.IsAddress) {
				t.Errorf("%s vin %d: addresses %v, want %s", txid, i, vin.Addresses, addr)
			} else if addr == "" && (len(vin.Addresses) != 0 || vin.IsAddress) {
				t.Errorf("%s vin %d: spends an output without address, shown as %v", txid, i, vin.Addresses)
			}
		}
		for n, vo := range got.Vout {
			o := ref.Tx.TxOut[n]
			out += o.Value
			wantAmount(t, txid+" vout value", vo.Value, o.Value)
			wantOutputAddresses(t, f, txid+" vout", vo, o.PkScript)
			sp, spent := f.SpentBy(txid, n)
			if vo.N != n || vo.Spent != spent || vo.SpentTxID != sp.Txid || vo.SpentIndex != sp.Vin || vo.SpentHeight != sp.Height {
				t.Errorf("%s vout %d: spent %v by %s:%d at %d, want %+v", txid, n, vo.Spent, vo.SpentTxID, vo.SpentIndex, vo.SpentHeight, sp)
			}
		}
		wantAmount(t, txid+" value", got.Value, out)
		wantAmount(t, txid+" fees", got.Fees, info.Fee)
		if info.Position == 0 {
			in = 0
		}
		wantAmount(t, txid+" valueIn", got.ValueIn, in)
	}
}

// OP_RETURN outputs show their text, or their hex when it is not UTF-8.
func TestTxDataOutputs(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	want := map[string]bool{
		"OP_RETURN (" + string(chaingen.OPReturnText) + ")":        false,
		"OP_RETURN " + hex.EncodeToString(chaingen.OPReturnBinary): false,
	}
	for txid := range f.Ledger.Txs {
		for _, o := range f.Tx(txid).Tx.TxOut {
			if len(o.PkScript) == 0 || o.PkScript[0] != txscript.OP_RETURN {
				continue
			}
			tx, err := svc.Tx(context.Background(), txid)
			if err != nil {
				t.Fatal(err)
			}
			for _, vo := range tx.Vout {
				if len(vo.Addresses) == 1 {
					if _, ok := want[vo.Addresses[0]]; ok {
						want[vo.Addresses[0]] = true
					}
				}
			}
		}
	}
	for text, seen := range want {
		if !seen {
			t.Errorf("no output shown as %q", text)
		}
	}
}

// Confirmed txs fetched from the node are cached in the store, unless the
// cache is off.
func TestTxCache(t *testing.T) {
	f := apitest.New(t, apitest.Options{}) // its own store: an empty tx cache
	ctx := context.Background()
	txid := f.Block(112).Transactions[1].TxHash().String()
	calls := func(svc *api.UtxoService) int64 {
		before := f.Node.RawTxCalls.Load()
		if _, err := svc.Tx(ctx, txid); err != nil {
			t.Fatal(err)
		}
		return f.Node.RawTxCalls.Load() - before
	}
	off := newService(f, func(c *api.Config) { c.TxCache = nil })
	if a, b := calls(off), calls(off); a != 1 || b != 1 {
		t.Fatalf("cache off: %d and %d node calls, want 1 each", a, b)
	}
	on := newService(f)
	if a, b := calls(on), calls(on); a != 1 || b != 0 {
		t.Fatalf("cache on: %d and %d node calls, want 1 then 0", a, b)
	}
}

// A pending tx the node has, without a mempool: unconfirmed, its inputs
// resolved from the index or, for a pending parent, from the node.
func TestTxFromNodeOnly(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	for _, tx := range []*wire.MsgTx{f.PendingPayment, f.PendingChild} {
		got, err := svc.Tx(context.Background(), tx.TxHash().String())
		if err != nil {
			t.Fatal(err)
		}
		prevs, err := f.Gen.Prevouts(tx, f.Pending...)
		if err != nil {
			t.Fatal(err)
		}
		var in, out int64
		for i, p := range prevs {
			in += p.Value
			wantAmount(t, "vin value", got.Vin[i].Value, p.Value)
		}
		for _, o := range tx.TxOut {
			out += o.Value
		}
		if got.BlockHeight != -1 || got.Confirmations != 0 || got.BlockHash != "" || !got.Rbf {
			t.Fatalf("pending tx: %+v", got)
		}
		wantAmount(t, "fees", got.Fees, in-out)
	}
}

func TestTxErrorsAndRawForms(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	tx := f.Block(111).Transactions[2]
	txid := tx.TxHash().String()
	unknown := strings.Repeat("ab", 32)

	got, err := svc.Tx(ctx, strings.ToUpper(txid))
	if err != nil || got.Txid != txid {
		t.Fatalf("upper case txid: %v %v", got, err)
	}
	for _, bad := range []string{"", "xyz", txid[:63], txid + "0", strings.Repeat("zz", 32)} {
		_, err := svc.Tx(ctx, bad)
		wantUserError(t, err, "Invalid txid")
		_, err = svc.RawTx(ctx, bad)
		wantUserError(t, err, "Invalid txid")
		_, err = svc.TxSpecific(ctx, bad)
		wantUserError(t, err, "Invalid txid")
	}
	_, err = svc.Tx(ctx, unknown)
	wantUserError(t, err, "Transaction '"+unknown+"' not found")
	_, err = svc.RawTx(ctx, unknown)
	wantUserError(t, err, "Transaction '"+unknown+"' not found")
	_, err = svc.TxSpecific(ctx, unknown)
	wantUserError(t, err, "Transaction '"+unknown+"' not found")

	raw, err := svc.RawTx(ctx, txid)
	if err != nil || raw != hex.EncodeToString(serialized(t, tx)) {
		t.Fatalf("rawtx: %s %v", raw, err)
	}
	spec, err := svc.TxSpecific(ctx, txid)
	var v struct{ Txid, Hex, Blockhash string }
	if err != nil || json.Unmarshal(spec, &v) != nil || v.Txid != txid || v.Hex != raw || v.Blockhash != f.BlockHash(111) {
		t.Fatalf("tx-specific: %s %v", spec, err)
	}
}
