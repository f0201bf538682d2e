package chaingen

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// RunesSpec sizes a chain of rune txs mixed with payments (see Runes).
type RunesSpec struct {
	// Blocks is the number of blocks Runes appends.
	Blocks int
	// Payments and RuneTxs are the plain payments and the rune txs
	// (etchings, mints, transfers) per block once coinbases mature.
	Payments, RuneTxs int
}

// RunesBenchSpec returns a spec of the given number of blocks (starting
// from genesis) with roughly totalTxs txs, two in five of them rune txs.
func RunesBenchSpec(params *chaincfg.Params, blocks, totalTxs int) RunesSpec {
	per := BenchSpec(params, blocks, totalTxs).TxsPerBlock
	return RunesSpec{Blocks: blocks, Payments: per - per*2/5, RuneTxs: per * 2 / 5}
}

// runeHolders is the range of P2WPKH scripts that receive runes, reused (an
// address holds several runes and many history rows).
const (
	runeHolderBase = 3 << 22
	runeHolders    = 4096
	runeOutValue   = 10_000
)

// runeCoin is an output holding amount of one rune, kept out of the
// wallet's pool so that payments do not move its runes by chance.
type runeCoin struct {
	u      *utxo
	id     runestone.RuneID
	amount uint64
}

// RunesStats counts what Runes made.
type RunesStats struct {
	Etchings, Mints, Transfers, Payments int
}

type runesState struct {
	ids      []runestone.RuneID // etched in earlier blocks: mintable
	coins    []runeCoin
	next     uint64
	stats    RunesStats
	newIDs   []runestone.RuneID
	building *blockBuilder
}

// Runes appends spec.Blocks blocks: once coinbases mature, each block has
// spec.RuneTxs rune txs (5% etchings with a premine and open mint terms,
// 35% mints of runes etched in earlier blocks, 60% edict transfers that
// split a held output in two, paying the fee from a wallet coin) and
// spec.Payments plain payments. The result is deterministic.
func (g *Generator) Runes(spec RunesSpec) (RunesStats, error) {
	start := g.Height() + 1
	end := start + int32(spec.Blocks) - 1
	first := max(start, scriptStart(g.params))
	st := &runesState{}
	for h := start; h <= end; h++ {
		b := g.newBlock()
		if h >= first {
			st.building, st.newIDs = b, nil
			for range spec.RuneTxs {
				if err := g.runeTx(st); err != nil {
					return st.stats, fmt.Errorf("chaingen: rune tx at height %d: %w", h, err)
				}
			}
			n := len(b.txs)
			if err := g.fill(b, spec.Payments); err != nil {
				return st.stats, err
			}
			st.stats.Payments += len(b.txs) - n
		}
		if err := g.finish(b); err != nil {
			return st.stats, err
		}
		st.ids = append(st.ids, st.newIDs...)
	}
	return st.stats, nil
}

// runeTx draws and stages one rune tx; it etches when nothing is etched
// or held yet, and does nothing when the wallet has no coin left.
func (g *Generator) runeTx(st *runesState) error {
	b := st.building
	r := b.rng
	ins, _ := g.takePool(r, 1)
	if ins == nil {
		return nil
	}
	switch p := r.intn(100); {
	case p < 5 || len(st.ids) == 0:
		return g.runeEtch(st, ins)
	case p < 40 || len(st.coins) == 0:
		return g.runeMint(st, ins)
	default:
		return g.runeTransfer(st, ins)
	}
}

// holder is the output of a rune holder.
func (g *Generator) holder(st *runesState) (*wire.TxOut, error) {
	st.next++
	return g.pay(P2WPKH, runeHolderBase+st.next%runeHolders, runeOutValue)
}

// stageRunes stages a tx whose outputs 1.. take runes, and keeps each
// output of held (vout: amount) out of the pool.
func (g *Generator) stageRunes(st *runesState, ins []*utxo, r *runestone.Runestone, nOut int, id runestone.RuneID, held map[int]uint64) (*wire.MsgTx, error) {
	outs := []*wire.TxOut{{PkScript: r.Encipher()}}
	for range nOut {
		o, err := g.holder(st)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	b := st.building
	tx, err := g.spend(b, ins, outs, changeKinds[b.rng.intn(len(changeKinds))], 2)
	if err != nil {
		return nil, err
	}
	for vout, amount := range held {
		if us := g.reserve(tx, vout, vout+1); len(us) == 1 {
			st.coins = append(st.coins, runeCoin{u: us[0], id: id, amount: amount})
		}
	}
	return tx, nil
}

// runeEtch etches an unnamed rune (no commitment needed), its premine to
// output 1, open to 100,000 mints of 100.
func (g *Generator) runeEtch(st *runesState, ins []*utxo) error {
	b := st.building
	premine, amount, capv := runestone.U64(1_000_000), runestone.U64(100), runestone.U64(100_000)
	div := uint8(b.rng.intn(4))
	e := &runestone.Runestone{Etching: &runestone.Etching{Premine: &premine, Divisibility: &div,
		Terms: &runestone.Terms{Amount: &amount, Cap: &capv}}}
	// its id: the block's height and its position (the coinbase is 0)
	id := runestone.RuneID{Block: uint64(b.height), Tx: uint32(len(b.txs) + 1)}
	if _, err := g.stageRunes(st, ins, e, 1, id, map[int]uint64{1: 1_000_000}); err != nil {
		return err
	}
	st.newIDs = append(st.newIDs, id)
	st.stats.Etchings++
	return nil
}

// runeMint mints a rune etched in an earlier block to output 1.
func (g *Generator) runeMint(st *runesState, ins []*utxo) error {
	id := st.ids[st.building.rng.intn(len(st.ids))]
	if _, err := g.stageRunes(st, ins, &runestone.Runestone{Mint: &id}, 1, id, map[int]uint64{1: 100}); err != nil {
		return err
	}
	st.stats.Mints++
	return nil
}

// runeTransfer splits a held output: an edict gives part to output 1, the
// pointer the rest to output 2; the wallet coin pays the fee.
func (g *Generator) runeTransfer(st *runesState, ins []*utxo) error {
	r := st.building.rng
	i := r.intn(len(st.coins))
	c := st.coins[i]
	st.coins[i] = st.coins[len(st.coins)-1]
	st.coins = st.coins[:len(st.coins)-1]
	part := c.amount
	held := map[int]uint64{1: c.amount}
	if c.amount > 1 {
		part = 1 + uint64(r.intn(int(min(c.amount-1, 1<<30))))
		held = map[int]uint64{1: part, 2: c.amount - part}
	}
	two := uint32(2)
	stone := &runestone.Runestone{Edicts: []runestone.Edict{{ID: c.id, Amount: runestone.U64(part), Output: 1}}, Pointer: &two}
	if _, err := g.stageRunes(st, append([]*utxo{c.u}, ins...), stone, 2, c.id, held); err != nil {
		return err
	}
	st.stats.Transfers++
	return nil
}
