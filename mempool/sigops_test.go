package mempool

import (
	"bytes"
	"compress/bzip2"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// mainnetBlock574200 is a real mainnet block (3,315 txs) kept by the btc
// parser's tests.
const mainnetBlock574200 = "../bchain/coins/btc/testdata/mainnet/block-0000000000000000001602407ac49862a7bca9d00f7f402db20b7be2f5de59d2.blk.bz2"

// toTx converts a wire tx with the prevout scripts of its inputs.
func toTx(msg *wire.MsgTx, prev [][]byte) *Tx {
	tx := &Tx{Tx: &bchain.Tx{Txid: bchain.Hash(msg.TxHash())}}
	for i, in := range msg.TxIn {
		cb := in.PreviousOutPoint.Index == wire.MaxPrevOutIndex && in.PreviousOutPoint.Hash == [32]byte{}
		tx.Vin = append(tx.Vin, bchain.Vin{Coinbase: cb, ScriptSig: in.SignatureScript, Witness: in.Witness})
		if prev != nil {
			tx.Prevouts = append(tx.Prevouts, Prevout{Desc: prev[i], Known: true})
		}
	}
	for _, o := range msg.TxOut {
		tx.Vout = append(tx.Vout, bchain.Vout{Value: uint64(o.Value), Script: o.PkScript})
	}
	return tx
}

func pushes(script []byte) [][]byte {
	var out [][]byte
	tok := txscript.MakeScriptTokenizer(0, script)
	for tok.Next() {
		if tok.Opcode() > txscript.OP_16 {
			return nil // not push-only
		}
		out = append(out, tok.Data())
	}
	if tok.Err() != nil {
		return nil
	}
	return out
}

func hash160(b []byte) []byte { return address.Hash160(b) }

// prevoutOf derives the script an input spends from its own data, for
// the unambiguous shapes of a 2019 block (no taproot yet): P2PKH, P2WPKH,
// P2SH (any redeem script, nested segwit included) and P2WSH; nil when the
// shape says nothing certain.
func prevoutOf(in *wire.TxIn) []byte {
	p := pushes(in.SignatureScript)
	switch {
	case len(in.SignatureScript) == 0 && len(in.Witness) == 2 && len(in.Witness[1]) == 33:
		return append([]byte{0x00, 0x14}, hash160(in.Witness[1])...)
	case len(in.SignatureScript) == 0 && len(in.Witness) > 2:
		h := sha256.Sum256(in.Witness[len(in.Witness)-1])
		return append([]byte{0x00, 0x20}, h[:]...)
	case len(in.Witness) > 0 && len(p) == 1 && (len(p[0]) == 22 || len(p[0]) == 34):
		return append(append([]byte{0xa9, 0x14}, hash160(p[0])...), 0x87)
	case len(in.Witness) == 0 && len(p) == 2 && (len(p[1]) == 33 || len(p[1]) == 65) && (p[1][0] == 2 || p[1][0] == 3 || p[1][0] == 4):
		return append(append([]byte{0x76, 0xa9, 0x14}, hash160(p[1])...), 0x88, 0xac)
	case len(in.Witness) == 0 && len(p) >= 3 && len(p[0]) == 0:
		// OP_0 <sigs...> <redeem script>: a P2SH multisig spend
		return append(append([]byte{0xa9, 0x14}, hash160(p[len(p)-1])...), 0x87)
	}
	return nil
}

// TestSigOpCostMainnet checks SigOpCost on every tx of mainnet block
// 574,200 whose inputs' prevouts can be told from the inputs themselves
// against btcd's blockchain.GetSigOpCost (a separate implementation of
// Core's GetTransactionSigOpCost) over a view holding those prevouts.
func TestSigOpCostMainnet(t *testing.T) {
	f, err := os.Open(mainnetBlock574200)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var blk wire.MsgBlock
	if err := blk.Deserialize(bzip2.NewReader(f)); err != nil {
		t.Fatal(err)
	}
	checked, total, withP2SH, withWitness := 0, 0, 0, 0
	kinds := map[int]int{}
	for ti, msg := range blk.Transactions {
		var prev [][]byte
		view := blockchain.NewUtxoViewpoint()
		ok := true
		if ti > 0 {
			for _, in := range msg.TxIn {
				pk := prevoutOf(in)
				if pk == nil {
					ok = false
					break
				}
				prev = append(prev, pk)
				view.Entries()[in.PreviousOutPoint] = blockchain.NewUtxoEntry(&wire.TxOut{Value: 1, PkScript: pk}, 1, false)
			}
		}
		if !ok {
			continue
		}
		want, err := blockchain.GetSigOpCost(btcutil.NewTx(msg), ti == 0, view, true, true)
		if err != nil {
			t.Fatalf("tx %d: btcd: %v", ti, err)
		}
		got := SigOpCost(toTx(msg, prev))
		if int(got) != want {
			t.Fatalf("tx %d %s: SigOpCost %d, btcd %d", ti, msg.TxHash(), got, want)
		}
		for _, pk := range prev {
			switch {
			case txscript.IsPayToScriptHash(pk):
				withP2SH++
			case pk[0] == 0x00:
				withWitness++
			}
		}
		kinds[int(got)]++
		checked++
		total += int(got)
	}
	t.Logf("%d of %d txs checked, %d P2SH and %d witness inputs, sigop cost %d, costs seen %v", checked, len(blk.Transactions), withP2SH, withWitness, total, kinds)
	if checked < 3_000 || withP2SH < 1_000 || withWitness < 300 {
		t.Fatalf("too few txs checked: %d (P2SH inputs %d, witness inputs %d)", checked, withP2SH, withWitness)
	}
}

// TestSigOpCostKnown checks hand-counted costs: block 170's tx (a P2PK
// spend paying two P2PK outputs: 2 legacy sigops × 4), a coinbase, and a
// tx whose prevouts are unknown (legacy count only).
func TestSigOpCostKnown(t *testing.T) {
	raw, _ := hex.DecodeString("0100000001c997a5e56e104102fa209c6a852dd90660a20b2d9c352423edce25857fcd3704000000004847304402204e45e16932b8af514961a1d3a1a25fdf3f4f7732e9d624c6c61548ab5fb8cd410220181522ec8eca07de4860a4acdd12909d831cc56cbbac4622082221a8768d1d0901ffffffff0200ca9a3b00000000434104ae1a62fe09c5f51b13905f07f06b99a2f7159b2225f374cd378d71302fa28414e7aab37397f554a7df5f142c21c1b7303b8a0626f1baded5c72a704f7e6cd84cac00286bee0000000043410411db93e1dcdb8a016b49840f8c53bc1eb68a382e97b1482ecad7b148a6909a5cb2e0eaddfb84ccf9744464f82e160bfa9b8b64f9d4c03f999b8643f656b412a3ac00000000")
	var msg wire.MsgTx
	if err := msg.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	if id := msg.TxHash().String(); id != "f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16" {
		t.Fatalf("txid %s", id)
	}
	// The prevout is block 9's coinbase output, a P2PK script (filed as
	// P2PKH by the index): neither P2SH nor a witness program.
	p2pk, _ := hex.DecodeString("410411db93e1dcdb8a016b49840f8c53bc1eb68a382e97b1482ecad7b148a6909a5cb2e0eaddfb84ccf9744464f82e160bfa9b8b64f9d4c03f999b8643f656b412a3ac")
	if got := SigOpCost(toTx(&msg, [][]byte{p2pk})); got != 8 {
		t.Fatalf("block 170 tx: %d, want 8", got)
	}
	// A P2SH 2-of-3 multisig spend whose prevout is not known yet counts
	// only its legacy sigops (none: the scriptSig is pushes only).
	ms := &Tx{Tx: &bchain.Tx{Vin: []bchain.Vin{{ScriptSig: []byte{0x00, 0x01, 0x52}}},
		Vout: []bchain.Vout{{Script: []byte{0x00, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}}}},
		Prevouts: []Prevout{{Known: false}}}
	if got := SigOpCost(ms); got != 0 {
		t.Fatalf("unknown prevout: %d, want 0", got)
	}
}
