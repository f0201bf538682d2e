package apitest

import (
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Oracle data derived from the raw chain with btcd's libraries, for
// answers the ledger does not describe: where a tx touches an address,
// what each input spends and who spends each output.

// Touch is where a confirmed tx touches an address.
type Touch struct {
	Inputs  []int // the inputs spending from the address
	Outputs []int // the outputs paying it
}

// Spend is the input spending an output.
type Spend struct {
	Txid   string
	Vin    int
	Height int
}

// TxRef locates a confirmed tx.
type TxRef struct {
	Tx     *wire.MsgTx
	Height int
	// Prevouts are the outputs its inputs spend (nil for a coinbase).
	Prevouts []*wire.TxOut
}

// oracle is filled once by replay.
type oracle struct {
	txs     map[string]*TxRef
	touches map[string]map[string]*Touch // address → txid → touch
	spends  map[wire.OutPoint]Spend
}

func (c *Chain) replay() {
	o := &oracle{txs: map[string]*TxRef{}, touches: map[string]map[string]*Touch{}, spends: map[wire.OutPoint]Spend{}}
	outs := map[wire.OutPoint]*wire.TxOut{}
	touch := func(addr, txid string) *Touch {
		if o.touches[addr] == nil {
			o.touches[addr] = map[string]*Touch{}
		}
		t := o.touches[addr][txid]
		if t == nil {
			t = &Touch{}
			o.touches[addr][txid] = t
		}
		return t
	}
	for h, b := range c.Gen.Blocks() {
		for pos, tx := range b.Transactions {
			txid := tx.TxHash().String()
			ref := &TxRef{Tx: tx, Height: h}
			if h > 0 && pos > 0 {
				for i, in := range tx.TxIn {
					prev := outs[in.PreviousOutPoint]
					ref.Prevouts = append(ref.Prevouts, prev)
					o.spends[in.PreviousOutPoint] = Spend{Txid: txid, Vin: i, Height: h}
					if a := c.Address(prev.PkScript); a != "" {
						t := touch(a, txid)
						t.Inputs = append(t.Inputs, i)
					}
				}
			}
			for i, out := range tx.TxOut {
				outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}] = out
				if a := c.Address(out.PkScript); a != "" && h > 0 {
					t := touch(a, txid)
					t.Outputs = append(t.Outputs, i)
				}
			}
			o.txs[txid] = ref
		}
	}
	c.oracle = o
}

// Address is the address an explorer shows for an output script ("" for
// none), as chaingen's ledger keys them.
func (c *Chain) Address(pkScript []byte) string { return chaingen.ExplorerAddress(pkScript, c.Params) }

// Tx returns a confirmed tx by txid, or nil.
func (c *Chain) Tx(txid string) *TxRef { return c.oracle.txs[txid] }

// Touches tells where a confirmed tx touches an address.
func (c *Chain) Touches(address, txid string) Touch {
	if t := c.oracle.touches[address][txid]; t != nil {
		return *t
	}
	return Touch{}
}

// SpentBy returns the confirmed input spending an output, if any.
func (c *Chain) SpentBy(txid string, vout int) (Spend, bool) {
	h, err := chainhashFromString(txid)
	if err != nil {
		return Spend{}, false
	}
	s, ok := c.oracle.spends[wire.OutPoint{Hash: h, Index: uint32(vout)}]
	return s, ok
}

// IsTaproot reports a P2TR output script.
func IsTaproot(pkScript []byte) bool {
	return txscript.GetScriptClass(pkScript) == txscript.WitnessV1TaprootTy
}

// TaprootScripts lists the distinct P2TR scripts a confirmed block's txs
// pay to or spend from: what a taproot block filter holds.
func (c *Chain) TaprootScripts(height int) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	add := func(s []byte) {
		if IsTaproot(s) && !seen[string(s)] {
			seen[string(s)] = true
			out = append(out, s)
		}
	}
	for _, tx := range c.Block(height).Transactions {
		ref := c.Tx(tx.TxHash().String())
		for _, p := range ref.Prevouts {
			add(p.PkScript)
		}
		for _, o := range tx.TxOut {
			add(o.PkScript)
		}
	}
	return out
}
