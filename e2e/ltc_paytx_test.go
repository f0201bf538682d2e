package e2e

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/regtest"
)

// Cheap litecoind wallet payments for tests that need many of them: the
// txs are built here and only signed by the wallet, so that no call runs
// the wallet's coin selection (about a second each on the CI machine).

// ltcCoin is an output of wallet w the test spends.
type ltcCoin struct {
	op    wire.OutPoint
	value int64
}

// ltcScriptOf is the output script of a wallet address.
func ltcScriptOf(t *testing.T, w *regtest.Client, addr string) []byte {
	t.Helper()
	var info struct {
		ScriptPubKey string `json:"scriptPubKey"`
	}
	ltcCall(t, w, &info, "getaddressinfo", addr)
	script, err := hex.DecodeString(info.ScriptPubKey)
	if err != nil || len(script) == 0 {
		t.Fatalf("getaddressinfo %s: script %q: %v", addr, info.ScriptPubKey, err)
	}
	return script
}

// txHex is tx's serialization in hex (witness included when it has one).
func txHex(t *testing.T, tx *wire.MsgTx) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(buf.Bytes())
}

// ltcSignWithWallet signs a tx spending wallet coins and returns its hex.
func ltcSignWithWallet(t *testing.T, w *regtest.Client, unsigned string) string {
	t.Helper()
	var signed struct {
		Hex      string `json:"hex"`
		Complete bool   `json:"complete"`
	}
	ltcCall(t, w, &signed, "signrawtransactionwithwallet", unsigned)
	if !signed.Complete {
		t.Fatalf("signrawtransactionwithwallet: not complete")
	}
	return signed.Hex
}

// ltcFanOut sends one tx paying n outputs of value litoshi to addr, funded
// by the wallet, locks them and returns them (mine it before spending
// them if the test needs them confirmed).
func ltcFanOut(t *testing.T, w *regtest.Client, addr string, n int, value int64) []ltcCoin {
	t.Helper()
	script := ltcScriptOf(t, w, addr)
	if len(script) != 22 || script[0] != 0 {
		t.Fatalf("%s is not a P2WPKH address", addr)
	}
	tx := wire.NewMsgTx(2)
	for range n {
		tx.AddTxOut(wire.NewTxOut(value, script))
	}
	var funded struct {
		Hex string `json:"hex"`
	}
	// iswitness false: a tx without inputs would otherwise read as segwit.
	ltcCall(t, w, &funded, "fundrawtransaction", txHex(t, tx), map[string]any{}, false)
	var txid string
	ltcCall(t, w, &txid, "sendrawtransaction", ltcSignWithWallet(t, w, funded.Hex))
	var sent struct {
		Hex string `json:"hex"`
	}
	ltcCall(t, w, &sent, "gettransaction", txid)
	raw, err := hex.DecodeString(sent.Hex)
	if err != nil {
		t.Fatal(err)
	}
	var got wire.MsgTx
	if err := got.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	hash, err := chainhash.NewHashFromStr(txid)
	if err != nil {
		t.Fatal(err)
	}
	var coins []ltcCoin
	for i, o := range got.TxOut {
		if o.Value == value && bytes.Equal(o.PkScript, script) {
			coins = append(coins, ltcCoin{op: wire.OutPoint{Hash: *hash, Index: uint32(i)}, value: value})
		}
	}
	if len(coins) != n {
		t.Fatalf("fan-out %s has %d outputs of %d to %s, want %d", txid, len(coins), value, addr, n)
	}
	// Locked, so that the wallet's own sends never pick them (it still
	// signs them).
	lock := make([]map[string]any, n)
	for i, c := range coins {
		lock[i] = map[string]any{"txid": txid, "vout": c.op.Index}
	}
	var locked bool
	ltcCall(t, w, &locked, "lockunspent", false, lock)
	if !locked {
		t.Fatal("lockunspent failed")
	}
	return coins
}

// ltcPayEach spends each coin (P2WPKH, as ltcFanOut's) to two outputs at
// the P2WPKH script: 141 vB each (one P2WPKH input, two P2WPKH outputs,
// whatever the signature's length), so coin i pays exactly rate+i sat/vB.
func ltcPayEach(t *testing.T, w *regtest.Client, coins []ltcCoin, script []byte, rate int64) []string {
	t.Helper()
	const vsize = 141
	if len(script) != 22 || script[0] != 0 {
		t.Fatalf("script %x is not P2WPKH", script)
	}
	var txids []string
	for i, c := range coins {
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(&c.op, nil, nil))
		tx.AddTxOut(wire.NewTxOut(c.value/2, script))
		tx.AddTxOut(wire.NewTxOut(c.value-c.value/2-(rate+int64(i))*vsize, script))
		var txid string
		ltcCall(t, w, &txid, "sendrawtransaction", ltcSignWithWallet(t, w, txHex(t, tx)))
		txids = append(txids, txid)
	}
	return txids
}
