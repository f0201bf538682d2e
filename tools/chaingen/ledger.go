package chaingen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// Ledger is what an explorer should report for a chain. It is the test
// oracle for the indexer, so it is computed by replaying raw blocks with
// btcd's libraries only, sharing no code with the indexer or the wallet.
//
// Genesis outputs are excluded: consensus never adds them to the UTXO set.
type Ledger struct {
	TipHeight int32
	TipHash   string
	// Addresses is keyed by the address string an explorer shows. P2PK
	// outputs are credited to the key's P2PKH address.
	Addresses map[string]*AddressLedger
	// NoAddress tallies outputs without an address: bare multisig,
	// non-standard and OP_RETURN scripts.
	NoAddress NoAddressTally
	Txs       map[string]TxInfo
}

// AddressLedger is one address's history.
type AddressLedger struct {
	Received int64
	Sent     int64
	Balance  int64
	// Txids lists each tx touching the address once in Blockbook's order:
	// blocks newest first; within a block the txs only spending from the
	// address, newest first, then those paying to it, newest first
	// (Blockbook's connect visits all outputs of a block before its
	// inputs, lists a tx where it first meets it, and stores each block's
	// list reversed).
	Txids []string
	// Spends holds the txids that spend from the address, Pays those that
	// pay to it.
	Spends, Pays map[string]bool
	// Utxos in Blockbook's order: newest first by height and position in
	// block, then by output index, all descending (Blockbook keeps an
	// address's outputs in the order it added them and lists them
	// backwards).
	Utxos []Utxo
}

// Utxo is an unspent output.
type Utxo struct {
	Txid     string
	Vout     uint32
	Value    int64
	Height   int32
	Coinbase bool
}

// NoAddressTally sums outputs that have no address.
type NoAddressTally struct {
	Outputs  int   // outputs created, including OP_RETURN
	Spent    int   // outputs spent
	Received int64 // value created
	Sent     int64 // value spent
	Balance  int64 // value still in the UTXO set
	Burned   int64 // value sent to provably unspendable OP_RETURN outputs
}

// TxInfo locates a tx in the chain.
type TxInfo struct {
	Height   int32
	Position int   // index in the block; 0 is the coinbase
	Fee      int64 // 0 for coinbases
}

// TxCount returns the number of txs touching the address.
func (a *AddressLedger) TxCount() int { return len(a.Txids) }

// Ledger computes the ledger of g's current chain.
func (g *Generator) Ledger() *Ledger {
	l, err := ComputeLedger(g.params, g.blocks)
	if err != nil {
		panic(fmt.Sprintf("chaingen: ledger of own chain: %v", err)) // generator bug
	}
	return l
}

type ledgerOut struct {
	addr     string
	value    int64
	height   int32
	position int
	coinbase bool
}

// ComputeLedger replays chain (indexed by height; chain[0] is genesis) and
// returns its ledger. It fails if the blocks do not link up or a tx spends
// an unknown output.
func ComputeLedger(params *chaincfg.Params, chain []*wire.MsgBlock) (*Ledger, error) {
	if len(chain) == 0 {
		return nil, fmt.Errorf("chaingen: empty chain")
	}
	r := &replay{params: params, utxos: make(map[wire.OutPoint]ledgerOut),
		l: &Ledger{Addresses: make(map[string]*AddressLedger), Txs: make(map[string]TxInfo)}}
	prev := chain[0].BlockHash()
	for h := 1; h < len(chain); h++ {
		b := chain[h]
		if b.Header.PrevBlock != prev {
			return nil, fmt.Errorf("chaingen: block %d does not extend block %d", h, h-1)
		}
		prev = b.BlockHash()
		for pos, tx := range b.Transactions {
			if err := r.applyTx(int32(h), pos, tx); err != nil {
				return nil, err
			}
		}
	}
	r.l.TipHeight, r.l.TipHash = int32(len(chain)-1), prev.String()
	if err := r.placeUtxos(); err != nil {
		return nil, err
	}
	return r.l, nil
}

// replay is ComputeLedger's state while it walks the chain.
type replay struct {
	params *chaincfg.Params
	l      *Ledger
	utxos  map[wire.OutPoint]ledgerOut
}

// touch is addr's entry, with txid recorded as one of its txs, spending
// from it or paying to it.
func (r *replay) touch(addr, txid string, spends bool) *AddressLedger {
	a := r.l.Addresses[addr]
	if a == nil {
		a = &AddressLedger{Spends: map[string]bool{}, Pays: map[string]bool{}}
		r.l.Addresses[addr] = a
	}
	if spends {
		a.Spends[txid] = true
	} else {
		a.Pays[txid] = true
	}
	if n := len(a.Txids); n == 0 || a.Txids[n-1] != txid {
		a.Txids = append(a.Txids, txid)
	}
	return a
}

// applyTx spends a tx's inputs (none for the coinbase, at position 0) and
// adds its outputs.
func (r *replay) applyTx(h int32, pos int, tx *wire.MsgTx) error {
	hash := tx.TxHash()
	txid := hash.String()
	var in, out int64
	if pos > 0 {
		for _, ti := range tx.TxIn {
			o, ok := r.utxos[ti.PreviousOutPoint]
			if !ok {
				return fmt.Errorf("chaingen: tx %s spends unknown output %v", txid, ti.PreviousOutPoint)
			}
			delete(r.utxos, ti.PreviousOutPoint)
			in += o.value
			if o.addr == "" {
				r.l.NoAddress.Spent++
				r.l.NoAddress.Sent += o.value
				continue
			}
			r.touch(o.addr, txid, true).Sent += o.value
		}
	}
	for vout, o := range tx.TxOut {
		out += o.Value
		addr := ExplorerAddress(o.PkScript, r.params)
		if addr == "" {
			r.l.NoAddress.Outputs++
			r.l.NoAddress.Received += o.Value
		} else {
			r.touch(addr, txid, false).Received += o.Value
		}
		if txscript.IsUnspendable(o.PkScript) {
			r.l.NoAddress.Burned += o.Value
			continue
		}
		r.utxos[wire.OutPoint{Hash: hash, Index: uint32(vout)}] = ledgerOut{
			addr: addr, value: o.Value, height: h, position: pos, coinbase: pos == 0}
	}
	info := TxInfo{Height: h, Position: pos}
	if pos > 0 {
		info.Fee = in - out
	}
	r.l.Txs[txid] = info
	return nil
}

// placeUtxos gives every address its unspent outputs (see Utxos) and
// checks that they add up to its balance.
func (r *replay) placeUtxos() error {
	type placed struct {
		Utxo
		position int
	}
	unspent := make(map[string][]placed)
	for op, o := range r.utxos {
		if o.addr == "" {
			r.l.NoAddress.Balance += o.value
			continue
		}
		unspent[o.addr] = append(unspent[o.addr], placed{Utxo{Txid: op.Hash.String(), Vout: op.Index,
			Value: o.value, Height: o.height, Coinbase: o.coinbase}, o.position})
	}
	for addr, a := range r.l.Addresses {
		// Appended in block order: reorder to Blockbook's (see Txids).
		slices.SortStableFunc(a.Txids, func(x, y string) int {
			tx, ty := r.l.Txs[x], r.l.Txs[y]
			if c := cmp.Compare(ty.Height, tx.Height); c != 0 {
				return c
			}
			if px, py := a.Pays[x], a.Pays[y]; px != py {
				if py {
					return -1
				}
				return 1
			}
			return cmp.Compare(ty.Position, tx.Position)
		})
		us := unspent[addr]
		slices.SortFunc(us, func(x, y placed) int {
			if c := cmp.Compare(y.Height, x.Height); c != 0 {
				return c
			}
			if c := cmp.Compare(y.position, x.position); c != 0 {
				return c
			}
			return cmp.Compare(y.Vout, x.Vout)
		})
		for _, u := range us {
			a.Utxos = append(a.Utxos, u.Utxo)
		}
		a.Balance = a.Received - a.Sent
		var sum int64
		for _, u := range a.Utxos {
			sum += u.Value
		}
		if sum != a.Balance {
			return fmt.Errorf("chaingen: %s: utxos sum %d != balance %d", addr, sum, a.Balance)
		}
	}
	return nil
}

// ExplorerAddress returns the address an explorer shows for an output
// script, or "" for scripts without one (bare multisig, OP_RETURN,
// non-standard). P2PK scripts map to the key's P2PKH address.
func ExplorerAddress(pkScript []byte, params *chaincfg.Params) string {
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(pkScript, params)
	if err != nil || len(addrs) != 1 {
		return ""
	}
	switch class {
	case txscript.PubKeyTy:
		if pk, ok := addrs[0].(*address.AddressPubKey); ok {
			return pk.AddressPubKeyHash().EncodeAddress()
		}
	case txscript.PubKeyHashTy, txscript.ScriptHashTy, txscript.WitnessV0PubKeyHashTy,
		txscript.WitnessV0ScriptHashTy, txscript.WitnessV1TaprootTy:
		return addrs[0].EncodeAddress()
	}
	return ""
}
