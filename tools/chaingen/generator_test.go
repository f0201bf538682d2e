package chaingen

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

func TestDeterministic(t *testing.T) {
	a := demoChain(t)
	b := New(params, "chaingen-test")
	if err := b.Demo(DefaultDemo()); err != nil {
		t.Fatal(err)
	}
	ab, bb := a.Blocks(), b.Blocks()
	if len(ab) != len(bb) {
		t.Fatalf("heights %d vs %d", len(ab)-1, len(bb)-1)
	}
	for h := range ab {
		if ab[h].BlockHash() != bb[h].BlockHash() {
			t.Fatalf("block %d differs between runs", h)
		}
		if want := int64(DefaultTimeStart + DefaultTimeStep*h); h > 0 && ab[h].Header.Timestamp.Unix() != want {
			t.Fatalf("block %d time %d, want %d", h, ab[h].Header.Timestamp.Unix(), want)
		}
	}
	c := New(params, "another-seed")
	if err := c.Extend(1, 0); err != nil {
		t.Fatal(err)
	}
	if c.Blocks()[1].BlockHash() == ab[1].BlockHash() {
		t.Fatal("different seeds produced the same block")
	}
}

func TestDemoShape(t *testing.T) {
	g := demoChain(t)
	txs := 0
	for _, b := range g.Blocks()[1:] {
		txs += len(b.Transactions) - 1
	}
	if g.Height() != 240 || txs < 300 || txs > 600 {
		t.Fatalf("demo has %d blocks and %d txs, want 240 and a few hundred", g.Height(), txs)
	}
	if err := New(params, "x").Demo(DemoSpec{Blocks: 100}); err == nil {
		t.Fatal("a demo too short for its scripted steps was accepted")
	}
}

// TestScriptCoverage classifies every output and spent input of the demo
// with txscript and requires each kind both paid and spent, plus the
// structural showcases.
func TestScriptCoverage(t *testing.T) {
	g := demoChain(t)
	prevouts := make(map[wire.OutPoint]*wire.TxOut)
	paid, spent := map[string]int{}, map[string]int{}
	var maxIns, maxOuts, chains int
	for _, b := range g.Blocks()[1:] {
		inBlock := make(map[[32]byte]bool) // txids of this block, for in-block parents
		parentInBlock := make(map[[32]byte]bool)
		for i, tx := range b.Transactions {
			txid := tx.TxHash()
			if i > 0 {
				maxIns = max(maxIns, len(tx.TxIn))
				for _, in := range tx.TxIn {
					prev := prevouts[in.PreviousOutPoint]
					if prev == nil {
						t.Fatalf("tx %s spends unknown %v", txid, in.PreviousOutPoint)
					}
					spent[classifySpend(t, prev.PkScript, in)]++
					if inBlock[in.PreviousOutPoint.Hash] {
						if parentInBlock[in.PreviousOutPoint.Hash] {
							chains++ // grandparent -> parent -> tx, all in this block
						}
						parentInBlock[txid] = true
					}
				}
			}
			maxOuts = max(maxOuts, len(tx.TxOut))
			for vout, out := range tx.TxOut {
				paid[classifyOutput(out.PkScript)]++
				prevouts[wire.OutPoint{Hash: txid, Index: uint32(vout)}] = out
			}
			inBlock[txid] = true
		}
	}
	for _, k := range AllKinds {
		if paid[k.String()] == 0 || spent[k.String()] == 0 {
			t.Errorf("%v: paid %d times, spent %d times", k, paid[k.String()], spent[k.String()])
		}
	}
	for _, c := range []string{"op_return-text", "op_return-binary"} {
		if paid[c] == 0 {
			t.Errorf("no %s output", c)
		}
	}
	if maxIns < 100 || maxOuts < 250 || chains == 0 {
		t.Errorf("max inputs %d, max outputs %d, in-block chains %d", maxIns, maxOuts, chains)
	}
	if other := paid["other"] + spent["other"]; other != 0 {
		t.Errorf("%d unclassified scripts", other)
	}
	t.Logf("paid %v\nspent %v", paid, spent)
}

// classifyOutput names a script by txscript's classification only.
func classifyOutput(script []byte) string {
	switch txscript.GetScriptClass(script) {
	case txscript.PubKeyHashTy:
		return P2PKH.String()
	case txscript.WitnessV0PubKeyHashTy:
		return P2WPKH.String()
	case txscript.ScriptHashTy:
		return P2SHP2WPKH.String() // the only P2SH the generator makes; spends prove it
	case txscript.WitnessV0ScriptHashTy:
		return P2WSHMultisig.String()
	case txscript.WitnessV1TaprootTy:
		return P2TR.String()
	case txscript.PubKeyTy:
		if len(script) == 35 {
			return P2PK.String()
		}
		return P2PKUncompressed.String()
	case txscript.MultiSigTy:
		if n, m, err := txscript.CalcMultiSigStats(script); err == nil && n == 2 && m == 1 {
			return BareMultisig.String()
		}
	case txscript.NullDataTy:
		pushes, err := txscript.PushedData(script)
		if err != nil || len(pushes) != 1 {
			return "other"
		}
		switch {
		case bytes.Equal(pushes[0], OPReturnText) && utf8.Valid(pushes[0]):
			return "op_return-text"
		case bytes.Equal(pushes[0], OPReturnBinary) && !utf8.Valid(pushes[0]):
			return "op_return-binary"
		}
		return "op_return" // witness commitments, filler notes
	case txscript.NonStandardTy:
		if len(script) == 35 && script[0] == txscript.OP_SHA256 && script[34] == txscript.OP_EQUAL {
			return HashLock.String()
		}
	}
	return "other"
}

// classifySpend names a spent output, checking the unlocking data matches.
func classifySpend(t *testing.T, prevScript []byte, in *wire.TxIn) string {
	c := classifyOutput(prevScript)
	ok := true
	switch c {
	case P2SHP2WPKH.String():
		pushes, err := txscript.PushedData(in.SignatureScript)
		ok = err == nil && len(pushes) == 1 &&
			txscript.GetScriptClass(pushes[0]) == txscript.WitnessV0PubKeyHashTy && len(in.Witness) == 2
	case P2WSHMultisig.String():
		ws := in.Witness[len(in.Witness)-1]
		n, m, err := txscript.CalcMultiSigStats(ws)
		ok = err == nil && n == 3 && m == 2 && len(in.Witness) == 4
	case P2TR.String():
		ok = len(in.Witness) == 1 && len(in.Witness[0]) == 64 // key path, default sighash
	case P2WPKH.String():
		ok = len(in.Witness) == 2 && len(in.SignatureScript) == 0
	}
	if !ok {
		t.Errorf("%s input %v has unexpected unlocking data", c, in.PreviousOutPoint)
	}
	return c
}

func TestLedgerSanity(t *testing.T) {
	g := demoChain(t)
	l := g.Ledger()

	var balances, fees, coinbases, subsidies int64
	for addr, a := range l.Addresses {
		balances += a.Balance
		if a.Balance != a.Received-a.Sent || a.Balance < 0 {
			t.Fatalf("%s: received %d sent %d balance %d", addr, a.Received, a.Sent, a.Balance)
		}
		seen := map[string]bool{}
		for i, txid := range a.Txids {
			info, ok := l.Txs[txid]
			if !ok || seen[txid] {
				t.Fatalf("%s: txid %s unknown or repeated", addr, txid)
			}
			seen[txid] = true
			if i > 0 {
				// Blockbook's order: newest block first; in a block the txs
				// only spending from the address, then those paying to it,
				// each part newest first.
				p := a.Txids[i-1]
				prev := l.Txs[p]
				ok := prev.Height > info.Height || prev.Height == info.Height &&
					(!a.Pays[p] && a.Pays[txid] || a.Pays[p] == a.Pays[txid] && prev.Position > info.Position)
				if !ok {
					t.Fatalf("%s: txids not in Blockbook's order at %d", addr, i)
				}
			}
		}
		for _, u := range a.Utxos {
			if !seen[u.Txid] || l.Txs[u.Txid].Height != u.Height {
				t.Fatalf("%s: utxo %+v not among its txs", addr, u)
			}
		}
	}
	for _, info := range l.Txs {
		fees += info.Fee // 0 for coinbases
	}
	for h, b := range g.Blocks()[1:] {
		subsidies += blockchain.CalcBlockSubsidy(int32(h+1), params)
		for _, o := range b.Transactions[0].TxOut {
			coinbases += o.Value
		}
	}
	var view int64
	for _, c := range g.view {
		view += c.value
	}
	if balances+l.NoAddress.Balance != view || view != subsidies-l.NoAddress.Burned {
		t.Fatalf("balances %d + no-address %d, generator UTXO view %d, subsidies %d - burned %d",
			balances, l.NoAddress.Balance, view, subsidies, l.NoAddress.Burned)
	}
	if coinbases != subsidies+fees {
		t.Fatalf("coinbases pay %d, subsidies %d + fees %d", coinbases, subsidies, fees)
	}
	if l.NoAddress.Outputs == 0 || l.NoAddress.Spent == 0 {
		t.Fatalf("no-address tally %+v: expected bare multisig/hash-lock outputs both created and spent", l.NoAddress)
	}

	// The wallet's view (built by staging txs) and the ledger (replaying
	// blocks) are independent; they must agree on every addressed UTXO.
	walletUtxos := map[string]int64{}
	for _, u := range append(append([]*utxo(nil), g.wallet.pool...), g.wallet.pending...) {
		if u.info.address != "" {
			walletUtxos[u.op.String()] = u.value
		}
	}
	ledgerUtxos := 0
	for _, a := range l.Addresses {
		for _, u := range a.Utxos {
			ledgerUtxos++
			if v, ok := walletUtxos[u.Txid+":"+strconv.FormatUint(uint64(u.Vout), 10)]; !ok || v != u.Value {
				t.Fatalf("ledger utxo %+v not in wallet", u)
			}
		}
	}
	if ledgerUtxos != len(walletUtxos) {
		t.Fatalf("ledger has %d utxos, wallet %d", ledgerUtxos, len(walletUtxos))
	}

	// P2PK coinbases are credited to the miner key's P2PKH address.
	miner, err := g.Address(P2PKH, MinerIndex)
	if err != nil {
		t.Fatal(err)
	}
	coinbaseTxs := 0
	for _, txid := range l.Addresses[miner].Txids {
		if l.Txs[txid].Position == 0 {
			coinbaseTxs++
		}
	}
	if coinbaseTxs != 120 {
		t.Fatalf("miner P2PKH address has %d coinbases, want 120 (P2PKH + P2PK payouts)", coinbaseTxs)
	}
	// Address reuse: the demo address received and spent several times.
	demoAddr, _ := g.Address(P2WPKH, DemoIndex)
	if a := l.Addresses[demoAddr]; a == nil || a.TxCount() < 3 || a.Sent == 0 {
		t.Fatalf("demo address %s ledger %+v: want reuse with spends", demoAddr, a)
	}
}

// TestAddressesAgree cross-checks the wallet's addresses (built from
// address objects) with the ledger's (parsed from scripts).
func TestAddressesAgree(t *testing.T) {
	g := demoChain(t)
	for ref, si := range g.reg.byRef {
		if got := ExplorerAddress(si.pkScript, params); got != si.address {
			t.Fatalf("%v/%d: ledger address %q, wallet %q", ref.kind, ref.index, got, si.address)
		}
		if (si.address != "") != ref.kind.HasAddress() {
			t.Fatalf("%v: address %q", ref.kind, si.address)
		}
	}
}

func TestForkReplaysWallet(t *testing.T) {
	g := demoChain(t)
	f, err := g.Fork(g.Height(), "replay")
	if err != nil {
		t.Fatal(err)
	}
	set := func(w *wallet) map[wire.OutPoint]int64 {
		m := map[wire.OutPoint]int64{}
		for _, u := range append(append([]*utxo(nil), w.pool...), w.pending...) {
			m[u.op] = u.value
		}
		return m
	}
	if !reflect.DeepEqual(set(g.wallet), set(f.wallet)) {
		t.Fatal("wallet rebuilt by replay differs from the generating wallet")
	}
	if _, err := g.Fork(g.Height()+1, "x"); err == nil {
		t.Fatal("fork above the tip accepted")
	}
	if _, err := g.Fork(1, ""); err == nil {
		t.Fatal("fork with the parent's salt accepted")
	}
}

func TestAddBlockRejectsInvalidSpends(t *testing.T) {
	g, err := demoChain(t).Fork(demoChain(t).Height(), "invalid")
	if err != nil {
		t.Fatal(err)
	}
	tip := g.Blocks()[g.Height()]
	spend := func(ops ...wire.OutPoint) *wire.MsgTx {
		tx := wire.NewMsgTx(2)
		for _, op := range ops {
			tx.AddTxIn(&wire.TxIn{PreviousOutPoint: op})
		}
		tx.AddTxOut(&wire.TxOut{Value: 1000, PkScript: []byte{txscript.OP_TRUE}})
		return tx
	}
	unspent := g.wallet.pool[0].op
	cases := map[string][]*wire.MsgTx{
		"missing":   {spend(wire.OutPoint{Index: 7})},
		"double":    {spend(unspent), spend(unspent)},
		"immature":  {spend(wire.OutPoint{Hash: tip.Transactions[0].TxHash()})},
		"overspend": {func() *wire.MsgTx { tx := spend(unspent); tx.TxOut[0].Value = 1e16; return tx }()},
	}
	for name, txs := range cases {
		if _, err := g.AddBlock(txs...); err == nil {
			t.Errorf("%s: block accepted", name)
		}
	}
	if _, err := g.AddBlock(); err != nil || g.Height() != demoChain(t).Height()+1 {
		t.Fatalf("generator unusable after rejected blocks: %v", err)
	}
}

func TestBlockFileRoundTrip(t *testing.T) {
	g := demoChain(t)
	var buf bytes.Buffer
	if err := WriteBlocks(&buf, g.Blocks()); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	blocks, err := ReadBlocks(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != len(g.Blocks()) || blocks[len(blocks)-1].BlockHash() != g.Blocks()[g.Height()].BlockHash() {
		t.Fatalf("read %d blocks", len(blocks))
	}
	l, err := ComputeLedger(params, blocks)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, g.Ledger()) {
		t.Fatal("ledger of the re-read chain differs")
	}
	if _, err := ReadBlocks(bytes.NewReader(data[:len(data)-1])); err == nil {
		t.Fatal("truncated file accepted")
	}
	if _, err := ReadBlocks(strings.NewReader("not a block file")); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestBenchSpec(t *testing.T) {
	s := BenchSpec(params, 800, 150_000)
	if s.Blocks != 800 || s.TxsPerBlock < 200 || s.TxsPerBlock > 230 {
		t.Fatalf("BenchSpec(800, 150000) = %+v", s)
	}
}

// BenchmarkGenerate measures chain generation; b.N chains of 200 blocks
// with about 10k txs.
func BenchmarkGenerate(b *testing.B) {
	spec := BenchSpec(params, 200, 10_000)
	for b.Loop() {
		g := New(params, "bench")
		if err := g.Demo(spec); err != nil {
			b.Fatal(err)
		}
	}
}
