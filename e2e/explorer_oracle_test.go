package e2e

// What the explorer should show, computed from the generator's raw blocks
// with btcd's libraries and chaingen's ledger only (no explorer code).

import (
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// oracle extends the ledger with per-tx details.
type oracle struct {
	ledger *chaingen.Ledger
	hashes []string // block hashes by height
	blocks []*wire.MsgBlock
	txs    map[string]*oracleTx
	// sides[address][txid] tells where the address appears in the tx.
	sides map[string]map[string]oracleSide
	// net[address][txid] is what the tx changed for the address.
	net map[string]map[string]int64
}

type oracleTx struct {
	tx       *wire.MsgTx
	height   int32
	coinbase bool
	inAddrs  []string // per input: the address of the output it spends ("" none)
	inValues []int64
	outAddrs []string
	spentBy  map[uint32]wire.OutPoint // output → spending (txid, vin)
	vsize    int64
}

type oracleSide struct{ in, out bool }

func newOracle(g *chaingen.Generator) *oracle {
	params := &chaincfg.RegressionNetParams
	o := &oracle{ledger: g.Ledger(), blocks: g.Blocks(), txs: map[string]*oracleTx{},
		sides: map[string]map[string]oracleSide{}, net: map[string]map[string]int64{}}
	type prevout struct {
		addr  string
		value int64
	}
	outs := map[wire.OutPoint]prevout{}
	touch := func(addr, txid string, in bool, value int64) {
		if addr == "" {
			return
		}
		if o.sides[addr] == nil {
			o.sides[addr], o.net[addr] = map[string]oracleSide{}, map[string]int64{}
		}
		s := o.sides[addr][txid]
		if in {
			s.in = true
			o.net[addr][txid] -= value
		} else {
			s.out = true
			o.net[addr][txid] += value
		}
		o.sides[addr][txid] = s
	}
	for h, b := range o.blocks {
		o.hashes = append(o.hashes, b.BlockHash().String())
		if h == 0 {
			continue // genesis outputs are not spendable
		}
		for pos, tx := range b.Transactions {
			txid := tx.TxHash().String()
			ot := &oracleTx{tx: tx, height: int32(h), coinbase: pos == 0, spentBy: map[uint32]wire.OutPoint{},
				vsize: int64((tx.SerializeSizeStripped()*3 + tx.SerializeSize() + 3) / 4)}
			o.txs[txid] = ot
			for vin, in := range tx.TxIn {
				if pos == 0 {
					ot.inAddrs, ot.inValues = append(ot.inAddrs, ""), append(ot.inValues, 0)
					continue
				}
				prev := outs[in.PreviousOutPoint]
				ot.inAddrs, ot.inValues = append(ot.inAddrs, prev.addr), append(ot.inValues, prev.value)
				touch(prev.addr, txid, true, prev.value)
				if parent := o.txs[in.PreviousOutPoint.Hash.String()]; parent != nil {
					parent.spentBy[in.PreviousOutPoint.Index] = wire.OutPoint{Hash: tx.TxHash(), Index: uint32(vin)}
				}
			}
			for vout, out := range tx.TxOut {
				addr := chaingen.ExplorerAddress(out.PkScript, params)
				ot.outAddrs = append(ot.outAddrs, addr)
				outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(vout)}] = prevout{addr, out.Value}
				touch(addr, txid, false, out.Value)
			}
		}
	}
	return o
}

// txidsWhere lists an address's txids (newest first, as the ledger) where
// it appears on the given side.
func (o *oracle) txidsWhere(addr string, in bool) []string {
	var out []string
	for _, txid := range o.ledger.Addresses[addr].Txids {
		if s := o.sides[addr][txid]; in && s.in || !in && s.out {
			out = append(out, txid)
		}
	}
	return out
}

// confirmations of a tx at height.
func (o *oracle) confirmations(height int32) int32 { return o.ledger.TipHeight - height + 1 }

// fmtCoin renders satoshi as the explorer should: coin units, trailing
// zeros dropped, and the shortcut.
func fmtCoin(sat int64) string {
	sign := ""
	if sat < 0 {
		sign, sat = "-", -sat
	}
	s := strings.TrimRight(fmt.Sprintf("%d.%08d", sat/1e8, sat%1e8), "0")
	return sign + strings.TrimSuffix(s, ".") + " rBTC"
}

// fmtSignedCoin is fmtCoin with "+" on positive amounts.
func fmtSignedCoin(sat int64) string {
	if sat > 0 {
		return "+" + fmtCoin(sat)
	}
	return fmtCoin(sat)
}

// fmtNum renders an integer with thousands separators.
func fmtNum(v int64) string {
	s := fmt.Sprint(v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
