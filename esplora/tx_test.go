package esplora_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

func sha256Of(b []byte) [32]byte { return sha256.Sum256(b) }

// esploraTx is the tx shape as a client reads it.
type esploraTx struct {
	Txid     string `json:"txid"`
	Version  uint32 `json:"version"`
	Locktime uint32 `json:"locktime"`
	Size     int    `json:"size"`
	Weight   int    `json:"weight"`
	Fee      int64  `json:"fee"`
	Vin      []struct {
		Txid       string   `json:"txid"`
		Vout       uint32   `json:"vout"`
		Scriptsig  string   `json:"scriptsig"`
		Witness    []string `json:"witness"`
		IsCoinbase bool     `json:"is_coinbase"`
		Sequence   uint32   `json:"sequence"`
		Prevout    *struct {
			Scriptpubkey string `json:"scriptpubkey"`
			Value        int64  `json:"value"`
		} `json:"prevout"`
	} `json:"vin"`
	Vout []struct {
		Scriptpubkey        string `json:"scriptpubkey"`
		ScriptpubkeyType    string `json:"scriptpubkey_type"`
		ScriptpubkeyAddress string `json:"scriptpubkey_address"`
		Value               int64  `json:"value"`
	} `json:"vout"`
	Status esploraStatus `json:"status"`
}

type esploraStatus struct {
	Confirmed   bool   `json:"confirmed"`
	BlockHeight *int   `json:"block_height"`
	BlockHash   string `json:"block_hash"`
	BlockTime   *int64 `json:"block_time"`
}

// checkTx compares an answer with the raw tx, its prevouts and its block.
func checkTx(t *testing.T, f *fixture, got *esploraTx, tx *wire.MsgTx, prevouts []*wire.TxOut, height int) {
	t.Helper()
	id := tx.TxHash().String()
	if got.Txid != id || got.Version != uint32(tx.Version) || got.Locktime != tx.LockTime ||
		got.Size != tx.SerializeSize() || got.Weight != tx.SerializeSizeStripped()*3+tx.SerializeSize() {
		t.Fatalf("tx %s: %+v", id, got)
	}
	var in, out int64
	for i, txin := range tx.TxIn {
		v := got.Vin[i]
		if v.Scriptsig != hex.EncodeToString(txin.SignatureScript) || v.Sequence != txin.Sequence || len(v.Witness) != len(txin.Witness) {
			t.Fatalf("tx %s vin %d: %+v", id, i, v)
		}
		if prevouts == nil {
			if !v.IsCoinbase || v.Prevout != nil || v.Vout != 0xffffffff {
				t.Fatalf("tx %s coinbase vin: %+v", id, v)
			}
			continue
		}
		p := prevouts[i]
		if v.Txid != txin.PreviousOutPoint.Hash.String() || v.Vout != txin.PreviousOutPoint.Index || v.Prevout == nil ||
			v.Prevout.Scriptpubkey != hex.EncodeToString(p.PkScript) || v.Prevout.Value != p.Value {
			t.Fatalf("tx %s vin %d: %+v, want prevout %x %d", id, i, v, p.PkScript, p.Value)
		}
		in += p.Value
	}
	for n, o := range tx.TxOut {
		v := got.Vout[n]
		if v.Scriptpubkey != hex.EncodeToString(o.PkScript) || v.Value != o.Value {
			t.Fatalf("tx %s vout %d: %+v", id, n, v)
		}
		if a := f.Address(o.PkScript); v.ScriptpubkeyAddress != "" && v.ScriptpubkeyAddress != a {
			t.Fatalf("tx %s vout %d address %s, want %s", id, n, v.ScriptpubkeyAddress, a)
		}
		out += o.Value
	}
	if prevouts != nil && got.Fee != in-out || prevouts == nil && got.Fee != 0 {
		t.Fatalf("tx %s fee %d, want %d", id, got.Fee, in-out)
	}
	checkStatus(t, f, id, got.Status, height)
}

func checkStatus(t *testing.T, f *fixture, what string, got esploraStatus, height int) {
	t.Helper()
	if height < 0 {
		if got.Confirmed || got.BlockHeight != nil || got.BlockHash != "" || got.BlockTime != nil {
			t.Fatalf("%s: status %+v, want unconfirmed", what, got)
		}
		return
	}
	b := f.Block(height)
	if !got.Confirmed || got.BlockHeight == nil || *got.BlockHeight != height || got.BlockHash != b.BlockHash().String() ||
		got.BlockTime == nil || *got.BlockTime != b.Header.Timestamp.Unix() {
		t.Fatalf("%s: status %+v, want block %d", what, got, height)
	}
}

// TestEveryConfirmedTx reads every tx of the chain (every script kind,
// P2PK and empty-script spends, the 120-input and 260-output txs) and
// compares it, its hex and raw forms and its status with the raw chain.
func TestEveryConfirmedTx(t *testing.T) {
	f := newFixture(t, esploraOptions())
	n := 0
	for h, b := range f.Gen.Blocks() {
		if h == 0 {
			continue
		}
		for _, tx := range b.Transactions {
			id := tx.TxHash().String()
			var got esploraTx
			f.getJSON(t, "/api/tx/"+id, &got)
			ref := f.Tx(id)
			checkTx(t, f, &got, tx, ref.Prevouts, h)
			var buf bytes.Buffer
			if err := tx.Serialize(&buf); err != nil {
				t.Fatal(err)
			}
			if code, body := f.get(t, "/api/tx/"+id+"/hex"); code != http.StatusOK || body != hex.EncodeToString(buf.Bytes()) {
				t.Fatalf("hex of %s: %d %s", id, code, body)
			}
			if code, body := f.get(t, "/api/tx/"+id+"/raw"); code != http.StatusOK || body != buf.String() {
				t.Fatalf("raw of %s: %d", id, code)
			}
			var st esploraStatus
			f.getJSON(t, "/api/tx/"+id+"/status", &st)
			checkStatus(t, f, id, st, h)
			n++
		}
	}
	t.Logf("%d txs", n)
}

// TestPendingTxs reads the mempool's txs: unconfirmed, with prevouts from
// the chain or from their pending parent.
func TestPendingTxs(t *testing.T) {
	f := newFixture(t, esploraOptions())
	outs := map[wire.OutPoint]*wire.TxOut{}
	for _, b := range f.Gen.Blocks() {
		for _, tx := range b.Transactions {
			for n, o := range tx.TxOut {
				outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o
			}
		}
	}
	for _, tx := range f.Pending {
		for n, o := range tx.TxOut {
			outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o
		}
	}
	for _, tx := range f.Pending {
		prevs := make([]*wire.TxOut, len(tx.TxIn))
		for i, in := range tx.TxIn {
			prevs[i] = outs[in.PreviousOutPoint]
		}
		var got esploraTx
		f.getJSON(t, "/api/tx/"+tx.TxHash().String(), &got)
		checkTx(t, f, &got, tx, prevs, -1)
	}
	id := f.PendingPayment.TxHash().String()
	f.wantError(t, "GET", "/api/tx/"+id+"/merkle-proof", "", 404, "Transaction not found or is unconfirmed")
	f.wantError(t, "GET", "/api/tx/"+id+"/merkleblock-proof", "", 404, "Transaction not found or is unconfirmed")
}

func TestTxErrors(t *testing.T) {
	f := newFixture(t, esploraOptions())
	unknown := "00000000000000000000000000000000000000000000000000000000000000aa"
	for _, sub := range []string{"", "/hex", "/raw", "/outspends"} {
		f.wantError(t, "GET", "/api/tx/"+unknown+sub, "", 404, "Transaction not found")
		f.wantError(t, "GET", "/api/tx/xyz"+sub, "", 400, "Invalid hex string")
	}
	f.wantError(t, "GET", "/api/tx/"+unknown+"/merkle-proof", "", 404, "Transaction not found or is unconfirmed")
	f.wantError(t, "GET", "/api/tx/"+unknown+"/outspend/x", "", 400, "Invalid number")
	f.wantError(t, "GET", "/api/tx/"+unknown+"/nothing", "", 404, "endpoint does not exist")
	// electrs: an unknown tx is unconfirmed, an unknown output unspent.
	if code, body := f.get(t, "/api/tx/"+unknown+"/status"); code != 200 || body != `{"confirmed":false}` {
		t.Errorf("status of an unknown tx: %d %s", code, body)
	}
	if code, body := f.get(t, "/api/tx/"+unknown+"/outspend/0"); code != 200 || body != `{"spent":false}` {
		t.Errorf("outspend of an unknown tx: %d %s", code, body)
	}
	f.wantError(t, "POST", "/api/tx", "zz", 400, "")
	// mempool.space's routes (/api/v1) answer its JSON errors; its fee
	// routes need the mempool, which the fixture has not.
	f.wantError(t, "GET", "/api/v1/fees/recommended", "", 404, `{"error":"Projected mempool blocks are not available`)
	f.wantError(t, "GET", "/api/v1/fees/nothing", "", 404, `{"error":"endpoint does not exist \"/v1/fees/nothing\""}`)
	f.wantError(t, "GET", "/api/v1/cpfp/0000000000000000000000000000000000000000000000000000000000000000", "", 404, `{"error":"Projected mempool blocks are not available`)
	f.wantError(t, "GET", "/api/v1/nothing", "", 404, `{"error":"endpoint does not exist`)
	f.wantError(t, "GET", "/other", "", 404, "endpoint does not exist")
	f.wantError(t, "PUT", "/api/tx", "", 404, "endpoint does not exist")
}

// TestOutspends compares every output's spend with the raw chain.
func TestOutspends(t *testing.T) {
	f := newFixture(t, esploraOptions())
	for h, b := range f.Gen.Blocks() {
		if h == 0 || h%7 != 0 && h < len(f.Raw)-3 {
			continue
		}
		for _, tx := range b.Transactions {
			id := tx.TxHash().String()
			var got []struct {
				Spent  bool          `json:"spent"`
				Txid   string        `json:"txid"`
				Vin    *int          `json:"vin"`
				Status esploraStatus `json:"status"`
			}
			f.getJSON(t, "/api/tx/"+id+"/outspends", &got)
			if len(got) != len(tx.TxOut) {
				t.Fatalf("outspends of %s: %d, want %d", id, len(got), len(tx.TxOut))
			}
			for n := range tx.TxOut {
				sp, spent := f.SpentBy(id, n)
				g := got[n]
				pending := pendingSpender(f, tx.TxHash(), n)
				switch {
				case spent:
					if !g.Spent || g.Txid != sp.Txid || g.Vin == nil || *g.Vin != sp.Vin {
						t.Fatalf("outspend %s:%d = %+v, want %+v", id, n, g, sp)
					}
					checkStatus(t, f, id+":"+strconv.Itoa(n), g.Status, sp.Height)
				case pending != "":
					if !g.Spent || g.Txid != pending || g.Status.Confirmed {
						t.Fatalf("outspend %s:%d = %+v, want pending %s", id, n, g, pending)
					}
				default:
					if g.Spent {
						t.Fatalf("outspend %s:%d = %+v, want unspent", id, n, g)
					}
				}
			}
		}
	}
}

func pendingSpender(f *fixture, h chainhash.Hash, n int) string {
	for _, tx := range f.Pending {
		for _, in := range tx.TxIn {
			if in.PreviousOutPoint.Hash == h && in.PreviousOutPoint.Index == uint32(n) {
				return tx.TxHash().String()
			}
		}
	}
	return ""
}

// TestMerkleProofs checks Electrum's branch and bitcoind's merkleblock of
// txs at every position of a few blocks against the block's merkle root.
func TestMerkleProofs(t *testing.T) {
	f := newFixture(t, esploraOptions())
	for _, h := range []int{1, 60, len(f.Raw) - 1} {
		b := f.Block(h)
		for pos, tx := range b.Transactions {
			id := tx.TxHash().String()
			var p struct {
				BlockHeight int      `json:"block_height"`
				Merkle      []string `json:"merkle"`
				Pos         int      `json:"pos"`
			}
			f.getJSON(t, "/api/tx/"+id+"/merkle-proof", &p)
			if p.BlockHeight != h || p.Pos != pos {
				t.Fatalf("merkle-proof of %s: %+v", id, p)
			}
			root := tx.TxHash()
			idx := pos
			for _, s := range p.Merkle {
				sib, err := chainhash.NewHashFromStr(s)
				if err != nil {
					t.Fatal(err)
				}
				if idx%2 == 0 {
					root = chainhash.DoubleHashH(append(root[:], sib[:]...))
				} else {
					root = chainhash.DoubleHashH(append(sib[:], root[:]...))
				}
				idx /= 2
			}
			if root != b.Header.MerkleRoot {
				t.Fatalf("merkle-proof of %s gives root %s, want %s", id, root, b.Header.MerkleRoot)
			}
			code, body := f.get(t, "/api/tx/"+id+"/merkleblock-proof")
			raw, err := hex.DecodeString(body)
			if code != 200 || err != nil {
				t.Fatalf("merkleblock-proof of %s: %d %s", id, code, body)
			}
			var mb wire.MsgMerkleBlock
			if err := mb.BtcDecode(bytes.NewReader(raw), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
				t.Fatalf("merkleblock of %s: %v", id, err)
			}
			matched, mroot := extractMatches(mb)
			if mb.Header.BlockHash() != b.BlockHash() || int(mb.Transactions) != len(b.Transactions) ||
				len(matched) != 1 || matched[0] != tx.TxHash() || mroot != b.Header.MerkleRoot {
				t.Fatalf("merkleblock of %s: matched %v root %s", id, matched, mroot)
			}
		}
	}
}

// extractMatches walks a BIP37 partial merkle tree: the matched txids and
// the root it commits to.
func extractMatches(mb wire.MsgMerkleBlock) ([]chainhash.Hash, chainhash.Hash) {
	n := int(mb.Transactions)
	width := func(h uint) int { return (n + (1 << h) - 1) >> h }
	height := uint(0)
	for width(height) > 1 {
		height++
	}
	bit, hashIdx := 0, 0
	var matched []chainhash.Hash
	var walk func(h uint, p int) chainhash.Hash
	walk = func(h uint, p int) chainhash.Hash {
		flag := mb.Flags[bit/8]>>(bit%8)&1 == 1
		bit++
		if h == 0 || !flag {
			x := *mb.Hashes[hashIdx]
			hashIdx++
			if h == 0 && flag {
				matched = append(matched, x)
			}
			return x
		}
		l := walk(h-1, 2*p)
		r := l
		if 2*p+1 < width(h-1) {
			r = walk(h-1, 2*p+1)
		}
		return chainhash.DoubleHashH(append(l[:], r[:]...))
	}
	root := walk(height, 0)
	return matched, root
}

// TestBroadcast posts a new tx and reads back its txid; the node got it.
// A tx the node refuses answers 400 with the node's reason.
func TestBroadcast(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tx := f.PendingChild.Copy()
	tx.LockTime++ // a tx the node has not seen (it does not check signatures)
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	code, body := f.do(t, "POST", "/api/tx", hex.EncodeToString(buf.Bytes())+"\n")
	if code != 200 || body != tx.TxHash().String() {
		t.Fatalf("POST /tx: %d %s", code, body)
	}
	sent := f.Node.Sent()
	if len(sent) == 0 || !bytes.Equal(sent[len(sent)-1], buf.Bytes()) {
		t.Fatalf("the node did not get the tx")
	}
	buf.Reset()
	if err := f.PendingChild.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	f.wantError(t, "POST", "/api/tx", hex.EncodeToString(buf.Bytes()), 400, "txn-already-in-mempool")
	f.wantError(t, "GET", "/api/broadcast", "", 400, "Missing tx")
}
