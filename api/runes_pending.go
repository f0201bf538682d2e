package api

// runes_pending.go: the runes pending (mempool) txs move, on runes=true
// answers and the rune history. Each pending tx is decoded against the
// runes of the outputs it spends (confirmed ones from the index, pending
// ones from its parents, decoded first), once: the cache of
// runes_mempool.go keeps the result while the tx stays in the mempool,
// and an answer looks its txs up there (decoding only what the cache
// does not hold yet).

import (
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/mempool"
)

// pendingMoves is what a pending tx does to runes.
type pendingMoves struct {
	ins    [][]runes.Balance // per input: the runes of the output it spends
	outs   map[uint32][]runes.Balance
	burned []runes.Balance
	moved  bool
	// stone: the tx has a runestone (what it mints or etches depends on
	// the tip); pendingParent: an input spends an output no block in the
	// view holds (a pending tx's, or one the index has not reached).
	stone, pendingParent bool
	// parents are the pending txs whose decoded outputs it read: a new
	// decoding of one of them makes this one stale (runes_mempool.go).
	parents []bchain.Hash
}

// pendingRunes decodes pending txs for one answer, each once.
type pendingRunes struct {
	s   *UtxoService
	v   *view
	txs map[bchain.Hash]*pendingMoves
	pos map[bchain.Hash]*db.TxAddresses // confirmed parents read so far (nil: not confirmed)
}

func (s *UtxoService) pendingRunes(v *view) *pendingRunes {
	return &pendingRunes{s: s, v: v, txs: map[bchain.Hash]*pendingMoves{}, pos: map[bchain.Hash]*db.TxAddresses{}}
}

// confirmed reads a parent's position in the view (nil: not confirmed).
func (p *pendingRunes) confirmed(txid bchain.Hash) (*db.TxAddresses, error) {
	if ta, ok := p.pos[txid]; ok {
		return ta, nil
	}
	ta, err := db.ReadTxOutputs(p.v.snap, txid)
	if err != nil {
		return nil, err
	}
	p.pos[txid] = ta
	return ta, nil
}

// parent is the pending tx an input spends, nil when the view holds it
// as confirmed or nobody knows it.
func (p *pendingRunes) parent(txid bchain.Hash) (*mempool.Tx, error) {
	ta, err := p.confirmed(txid)
	if err != nil || ta != nil {
		return nil, err
	}
	return p.s.mempoolTx(txid), nil
}

// maxPendingDepth bounds the pending ancestors a walk stacks (Bitcoin
// Core relays chains of at most 25; btcd has no limit).
const maxPendingDepth = 100_000

// of returns what a pending tx does to runes, from the cache or decoding
// it, its pending ancestors first (without recursion: a chain may be
// long).
func (p *pendingRunes) of(tx *mempool.Tx) (*pendingMoves, error) {
	stack := []*mempool.Tx{tx}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		if _, ok := p.txs[t.Txid]; ok {
			stack = stack[:len(stack)-1]
			continue
		}
		if m, ok := p.s.runeCache.get(p.v, t); ok {
			p.txs[t.Txid] = m
			stack = stack[:len(stack)-1]
			continue
		}
		if len(stack) > maxPendingDepth {
			// a mempool holds no cycle; this only stops a runaway walk
			return nil, fmt.Errorf("pending tx %s: more than %d pending ancestors", tx.Txid, maxPendingDepth)
		}
		pushed := false
		for _, in := range t.Vin {
			if in.Coinbase {
				continue
			}
			if _, ok := p.txs[in.PrevTxid]; ok {
				continue
			}
			par, err := p.parent(in.PrevTxid)
			if err != nil {
				return nil, err
			}
			if par != nil {
				stack, pushed = append(stack, par), true
			}
		}
		if pushed {
			continue
		}
		m, err := p.apply(t)
		if err != nil {
			return nil, err
		}
		p.txs[t.Txid] = m
		p.s.runeCache.put(p.v, t, m)
		if p.s.mempoolTx(t.Txid) != t {
			// it left (or changed) while decoded, maybe before the
			// mempool's OnRemoved could drop it: drop it here
			p.s.runeCache.forget(t.Txid)
		}
		stack = stack[:len(stack)-1]
	}
	return p.txs[tx.Txid], nil
}

// apply decodes a tx whose pending parents are decoded.
func (p *pendingRunes) apply(t *mempool.Tx) (*pendingMoves, error) {
	rt := runes.Tx{Txid: t.Txid, Outputs: make([][]byte, len(t.Vout))}
	m := &pendingMoves{ins: make([][]runes.Balance, len(t.Vin)), outs: map[uint32][]runes.Balance{}}
	for i := range t.Vout {
		rt.Outputs[i] = t.Vout[i].Script
		m.stone = m.stone || isRunestone(t.Vout[i].Script)
	}
	spent := map[runes.Pos][]runes.Balance{}
	for j, in := range t.Vin {
		ri := runes.Input{Coinbase: in.Coinbase, Witness: in.Witness}
		if j < len(t.Prevouts) {
			ri.PrevScript = t.Prevouts[j].Desc
		}
		if !in.Coinbase {
			// an unconfirmed parent's output: a position no block has
			ri.Prev = runes.Pos{Height: runes.PendingHeight, Index: uint32(j)}
			if par, ok := p.txs[in.PrevTxid]; ok {
				m.ins[j] = par.outs[in.PrevVout]
				m.pendingParent = true
				m.parents = append(m.parents, in.PrevTxid)
			} else if ta, err := p.confirmed(in.PrevTxid); err != nil {
				return nil, err
			} else if ta != nil {
				ri.Prev = runes.Pos{Height: ta.Height, Index: ta.Index, Vout: in.PrevVout}
				if m.ins[j], err = runes.ReadOutput(p.v.snap, ri.Prev); err != nil {
					return nil, err
				}
			} else {
				m.pendingParent = true // unknown yet: a coming block may hold it
			}
			if len(m.ins[j]) > 0 {
				spent[ri.Prev] = m.ins[j]
			}
		}
		rt.Inputs = append(rt.Inputs, ri)
	}
	var next uint32
	if p.v.hasTip {
		next = p.v.tip.Height + 1
	}
	r, err := runes.ApplyPending(p.v.snap, p.s.cfg.RunesNetwork, next, t.FirstSeen, rt, spent)
	if err != nil {
		return nil, fmt.Errorf("pending tx %s: %w", t.Txid, err)
	}
	if r != nil {
		m.moved = true
		for _, o := range r.Outputs {
			m.outs[o.Vout] = o.Balances
		}
		m.burned = r.Burned
	}
	return m, nil
}

// isRunestone: the script starts OP_RETURN OP_13.
func isRunestone(script []byte) bool {
	return len(script) > 1 && script[0] == 0x6a && script[1] == 0x5d
}

// pendingTxRunes adds a pending tx's runes to its answer, as txRunes
// does a confirmed one's.
func (p *pendingRunes) pendingTxRunes(names *runeNames, tx *Tx, mtx *mempool.Tx) error {
	m, err := p.of(mtx)
	if err != nil {
		return err
	}
	for vout, bal := range m.outs {
		if int(vout) >= len(tx.Vout) {
			return fmt.Errorf("runes of output %d of pending tx %s", vout, tx.Txid)
		}
		if tx.Vout[vout].Runes, err = names.balances(bal); err != nil {
			return err
		}
	}
	for i, bal := range m.ins {
		if i < len(tx.Vin) && len(bal) > 0 {
			if tx.Vin[i].Runes, err = names.balances(bal); err != nil {
				return err
			}
		}
	}
	tx.RunesBurned, err = names.balances(m.burned)
	return err
}

// delta is what pending txs add to the runes of the descriptors own
// says are the answer's, signed ("-5": five units leave), zeros left out.
func (p *pendingRunes) delta(txs []*mempool.Tx, own func(bchain.AddrDesc) bool) (*[]RuneBalance, error) {
	plus, minus := map[runes.RuneID]runes.U128{}, map[runes.RuneID]runes.U128{}
	for _, tx := range txs {
		m, err := p.of(tx)
		if err != nil {
			return nil, err
		}
		for vout, bal := range m.outs {
			if int(vout) < len(tx.OutDescs) && own(tx.OutDescs[vout]) {
				if err := sumRunes(plus, bal); err != nil {
					return nil, err
				}
			}
		}
		for j, bal := range m.ins {
			if j < len(tx.Prevouts) && tx.Prevouts[j].Known && own(tx.Prevouts[j].Desc) {
				if err := sumRunes(minus, bal); err != nil {
					return nil, err
				}
			}
		}
	}
	var list []runes.Balance
	neg := map[runes.RuneID]bool{}
	for _, m := range []map[runes.RuneID]runes.U128{plus, minus} {
		for id := range m {
			if _, done := neg[id]; done {
				continue
			}
			d, ok := plus[id].Sub(minus[id])
			if !ok {
				d, _ = minus[id].Sub(plus[id])
			}
			neg[id] = !ok
			if !d.IsZero() {
				list = append(list, runes.Balance{ID: id, Amount: d})
			}
		}
	}
	runes.SortBalances(list)
	out, err := (&runeNames{r: p.v.snap}).balances(list)
	for i := range out {
		if neg[list[i].ID] {
			out[i].Amount = "-" + out[i].Amount
		}
	}
	return &out, err
}

// movesRunes reports whether a pending tx moved runes of desc (spent an
// output of it holding runes or gave runes to one of its outputs).
func (p *pendingRunes) movesRunes(tx *mempool.Tx, own func(bchain.AddrDesc) bool) (bool, error) {
	m, err := p.of(tx)
	if err != nil || !m.moved {
		return false, err
	}
	for vout := range m.outs {
		if int(vout) < len(tx.OutDescs) && own(tx.OutDescs[vout]) {
			return true, nil
		}
	}
	for j, bal := range m.ins {
		if len(bal) > 0 && j < len(tx.Prevouts) && tx.Prevouts[j].Known && own(tx.Prevouts[j].Desc) {
			return true, nil
		}
	}
	return false, nil
}

func mempoolTxsOf(ps []pendingTx) []*mempool.Tx {
	out := make([]*mempool.Tx, len(ps))
	for i, p := range ps {
		out[i] = p.tx
	}
	return out
}

// accountUnconfirmedRunes is what pending txs add to an account's runes.
func (s *UtxoService) accountUnconfirmedRunes(v *view, a *xpubAccount) (*[]RuneBalance, error) {
	pending, err := s.accountMempool(v, a)
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, c := range a.chains {
		for _, ad := range c.addrs {
			own[string(ad.desc)] = true
		}
	}
	txs := make([]*mempool.Tx, len(pending))
	for i, p := range pending {
		txs[i] = p.tx
	}
	return s.pendingRunes(v).delta(txs, func(d bchain.AddrDesc) bool { return own[string(d)] })
}
