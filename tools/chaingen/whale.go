package chaingen

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// WhaleSpec sizes a whale-heavy chain (see Whale).
type WhaleSpec struct {
	// Blocks is the number of blocks Whale appends.
	Blocks int
	// TxsPerBlock is the number of planned txs per block once the wallet
	// has mature coins (fewer while it has too few outputs).
	TxsPerBlock int
}

// WhaleBenchSpec returns a spec for a whale-heavy chain of the given number
// of blocks (starting from genesis) with roughly totalTxs transactions.
func WhaleBenchSpec(params *chaincfg.Params, blocks, totalTxs int) WhaleSpec {
	return WhaleSpec(BenchSpec(params, blocks, totalTxs))
}

// Whale addresses and the account-style address range. Whale i is
// (WhaleKinds[i], WhaleBase+i); account addresses are P2WPKH at
// accountBase+n, each receiving once (like an HD wallet's fresh receive and
// change addresses) and spent later.
const (
	WhaleBase   = 1 << 21
	accountBase = 1 << 22
)

// WhaleKinds are the script kinds of the three whale addresses.
var WhaleKinds = []ScriptKind{P2WPKH, P2PKH, P2TR}

// whaleShare is how payments to whales split over the three, in percent:
// the largest gets about 56% of them.
var whaleShare = []int{56, 28, 16}

// whaleKind is what one planned tx of a whale chain does.
type whaleKind uint8

const (
	wkPlain        whaleKind = iota // random payment, as the bench filler
	wkWhalePay                      // pool coins to one whale
	wkWhaleSpend                    // whale coins (often many) out, change back to the whale half the time
	wkConsolidate                   // 20-60 pool coins into one output
	wkAccountPay                    // pool coins to a fresh account address
	wkAccountSpend                  // account coins to a cold address, change to a fresh account address
	wkOPReturn                      // one coin, an OP_RETURN and change
	wkFanout                        // one large coin to 20-60 cold addresses
)

// whaleMix is the per-mille mix of planned txs; children of same-block
// parents (about 0.9%) come on top, see whaleChildren.
var whaleMix = []struct {
	kind   whaleKind
	weight int
}{
	{wkPlain, 367}, {wkWhalePay, 198}, {wkWhaleSpend, 117}, {wkConsolidate, 33},
	{wkAccountPay, 129}, {wkAccountSpend, 78}, {wkOPReturn, 40}, {wkFanout, 29},
}

// whaleChildren is the per-mille share of planned txs followed by a child
// spending their change in the same block.
const whaleChildren = 9

// whaleState holds the coins the random filler must not touch: each
// whale's and the account addresses'.
type whaleState struct {
	whales      [][]*utxo
	accounts    []*utxo
	nextAccount uint64
}

// Whale appends spec.Blocks blocks of a whale-heavy mix: plain payments,
// payments to three whale addresses (so one address holds tens of
// thousands of txs and thousands of UTXOs), whale spends with many inputs,
// consolidations, account-style traffic over fresh addresses, OP_RETURNs,
// fan-outs and children of same-block parents. Like Demo it starts paying
// once coinbases mature; the result is deterministic.
func (g *Generator) Whale(spec WhaleSpec) error {
	start := g.Height() + 1
	end := start + int32(spec.Blocks) - 1
	first := max(start, scriptStart(g.params))
	st := &whaleState{whales: make([][]*utxo, len(WhaleKinds))}
	for h := start; h <= end; h++ {
		b := g.newBlock()
		if h >= first {
			if err := g.whaleFill(b, st, spec.TxsPerBlock); err != nil {
				return err
			}
		}
		if err := g.finish(b); err != nil {
			return err
		}
	}
	return nil
}

// whaleFill plans up to n txs for b, signs them in parallel, stages them in
// plan order and adds the same-block children.
func (g *Generator) whaleFill(b *blockBuilder, st *whaleState, n int) error {
	jobs := make([]*fillerJob, 0, n)
	for range n {
		j := g.planWhale(b, st)
		if j == nil {
			continue
		}
		jobs = append(jobs, j)
	}
	parallel(len(jobs), func(i int) { jobs[i].run(g.reg) })
	var parents []*wire.MsgTx
	for _, j := range jobs {
		if j.err != nil {
			return fmt.Errorf("chaingen: whale chain tx at height %d: %w", b.height, j.err)
		}
		for _, si := range j.derived {
			g.reg.add(si)
		}
		g.stage(b, j.tx)
		st.route(g.wallet, j.tx)
		if b.rng.intn(1000) < whaleChildren {
			parents = append(parents, j.tx)
		}
	}
	for _, p := range parents {
		if err := g.whaleChild(b, p); err != nil {
			return err
		}
	}
	return nil
}

// route moves the whale and account outputs of tx from the wallet's pool
// to their own lists.
func (st *whaleState) route(w *wallet, tx *wire.MsgTx) {
	txid := tx.TxHash()
	for i := range tx.TxOut {
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		pi, ok := w.pos[op]
		if !ok {
			continue
		}
		idx := w.pool[pi].info.ref.index
		switch {
		case idx >= WhaleBase && idx < WhaleBase+uint64(len(WhaleKinds)):
			st.whales[idx-WhaleBase] = append(st.whales[idx-WhaleBase], w.remove(op))
		case idx >= accountBase:
			st.accounts = append(st.accounts, w.remove(op))
		}
	}
}

// whaleChild spends the last output of parent (its change, if the wallet
// owns it) in the same block.
func (g *Generator) whaleChild(b *blockBuilder, parent *wire.MsgTx) error {
	u := g.wallet.remove(wire.OutPoint{Hash: parent.TxHash(), Index: uint32(len(parent.TxOut) - 1)})
	if u == nil {
		return nil
	}
	if u.value < 4*minFillerIn {
		g.wallet.push(u)
		return nil
	}
	o, err := g.pay(b.rng.destKind(), b.rng.coldRef(P2WPKH).index, u.value/2/1000*1000)
	if err != nil {
		return err
	}
	_, err = g.spend(b, []*utxo{u}, []*wire.TxOut{o}, changeKinds[b.rng.intn(len(changeKinds))], 2)
	return err
}

func (r *rng) whaleKind() whaleKind {
	n := r.intn(1000)
	for _, w := range whaleMix {
		if n < w.weight {
			return w.kind
		}
		n -= w.weight
	}
	return wkPlain
}

// planWhale draws one tx of the mix; nil if the coins it needs are missing.
func (g *Generator) planWhale(b *blockBuilder, st *whaleState) *fillerJob {
	r := b.rng
	switch r.whaleKind() {
	case wkWhalePay:
		w := pickShare(r, whaleShare)
		return g.planPayTo(r, []scriptRef{{WhaleKinds[w], WhaleBase + uint64(w)}})
	case wkWhaleSpend:
		return planWhaleSpend(r, st, pickShare(r, whaleShare))
	case wkConsolidate:
		return g.planConsolidate(r)
	case wkAccountPay:
		st.nextAccount++
		return g.planPayTo(r, []scriptRef{{P2WPKH, accountBase + st.nextAccount}})
	case wkAccountSpend:
		return planAccountSpend(r, st)
	case wkOPReturn:
		return g.planOPReturn(r, b)
	case wkFanout:
		return g.planFanout(r)
	default:
		return g.planFiller(b)
	}
}

// pickShare returns an index drawn with the given percent weights.
func pickShare(r *rng, shares []int) int {
	n := r.intn(100)
	for i, s := range shares {
		if n < s {
			return i
		}
		n -= s
	}
	return 0
}

// takePool removes nIn random pool coins (more while they sum to less than
// minFillerIn); nil, with the coins put back, if only dust is left.
func (g *Generator) takePool(r *rng, nIn int) ([]*utxo, int64) {
	pool := g.wallet
	var ins []*utxo
	var total int64
	for len(pool.pool) > 0 && (len(ins) < nIn || total < minFillerIn && len(ins) < maxFillerIns) {
		u := pool.take(r.intn(len(pool.pool)))
		ins = append(ins, u)
		total += u.value
	}
	if total < minFillerIn {
		for _, u := range ins {
			pool.push(u)
		}
		return nil, 0
	}
	return ins, total
}

func coldChange(r *rng) scriptRef { return r.coldRef(changeKinds[r.intn(len(changeKinds))]) }

// planPayTo pays a tenth to a half of 1-2 pool coins to each of refs.
func (g *Generator) planPayTo(r *rng, refs []scriptRef) *fillerJob {
	ins, total := g.takePool(r, 1+r.intn(2))
	if ins == nil {
		return nil
	}
	j := &fillerJob{ins: ins, change: coldChange(r), feeRate: 1 + int64(r.intn(10))}
	budget := total / 2 / int64(len(refs))
	for _, ref := range refs {
		v := budget/5 + int64(r.next()%uint64(budget-budget/5+1))
		j.outs = append(j.outs, plannedOut{ref: ref, value: max(v/1000*1000, dustLimit)})
	}
	return j
}

// whaleSpendIns is how many coins a whale spend takes: mostly one, and one
// in thirty-three sweeps 10-40 at once. With the change back to the whale
// it stays below what payments bring in, so the whales' UTXO lists grow
// into the thousands.
func whaleSpendIns(r *rng) int {
	switch p := r.intn(100); {
	case p >= 97:
		return 10 + r.intn(31)
	case p >= 80:
		return 2
	default:
		return 1
	}
}

// planWhaleSpend spends random coins of whale w to one or two cold
// addresses, with change back to the whale 70% of the time.
func planWhaleSpend(r *rng, st *whaleState, w int) *fillerJob {
	coins := st.whales[w]
	nIn := whaleSpendIns(r)
	if len(coins) < nIn+2 { // keep a few coins: the whale's UTXO list stays populated
		return nil
	}
	j := &fillerJob{feeRate: 1 + int64(r.intn(5))}
	var total int64
	for range nIn {
		i := r.intn(len(coins))
		j.ins = append(j.ins, coins[i])
		total += coins[i].value
		coins[i] = coins[len(coins)-1]
		coins = coins[:len(coins)-1]
	}
	st.whales[w] = coins
	nOut := 1 + r.intn(2)
	for range nOut {
		v := total / 3 / int64(nOut)
		j.outs = append(j.outs, plannedOut{ref: r.coldRef(r.destKind()), value: max(v/1000*1000, dustLimit)})
	}
	j.change = coldChange(r)
	if r.chance(70) {
		j.change = scriptRef{WhaleKinds[w], WhaleBase + uint64(w)}
	}
	return j
}

// planAccountSpend spends 1-3 of the oldest account coins to a cold
// address, with change to a fresh account address.
func planAccountSpend(r *rng, st *whaleState) *fillerJob {
	nIn := 1 + r.intn(3)
	if len(st.accounts) < nIn {
		return nil
	}
	j := &fillerJob{ins: append([]*utxo(nil), st.accounts[:nIn]...), feeRate: 1 + int64(r.intn(5))}
	st.accounts = st.accounts[nIn:]
	total := sumValues(j.ins)
	j.outs = []plannedOut{{ref: r.coldRef(r.destKind()), value: max(total/2/1000*1000, dustLimit)}}
	st.nextAccount++
	j.change = scriptRef{P2WPKH, accountBase + st.nextAccount}
	return j
}

// planConsolidate sweeps 20-60 random pool coins into one cold output.
func (g *Generator) planConsolidate(r *rng) *fillerJob {
	n := 20 + r.intn(41)
	if len(g.wallet.pool) < 4*n {
		return nil
	}
	ins, _ := g.takePool(r, n)
	if ins == nil {
		return nil
	}
	return &fillerJob{ins: ins, change: r.coldRef(P2WPKH), feeRate: 1 + int64(r.intn(3))}
}

// planOPReturn spends one pool coin to an OP_RETURN and change.
func (g *Generator) planOPReturn(r *rng, b *blockBuilder) *fillerJob {
	ins, _ := g.takePool(r, 1)
	if ins == nil {
		return nil
	}
	script, err := txscript.NullDataScript(fmt.Appendf(nil, "whale %d/%d", b.height, r.next()%1_000_000))
	if err != nil {
		panic(err) // short constant-size payload cannot fail
	}
	return &fillerJob{ins: ins, outs: []plannedOut{{script: script}}, change: coldChange(r), feeRate: 1 + int64(r.intn(10))}
}

// planFanout splits the largest pool coin over 20-60 cold addresses.
func (g *Generator) planFanout(r *rng) *fillerJob {
	u := g.wallet.takeFunding()
	if u == nil {
		return nil
	}
	n := 20 + r.intn(41)
	each := u.value / 2 / int64(n) / 1000 * 1000
	if each < 2*minFillerIn {
		g.wallet.push(u)
		return nil
	}
	j := &fillerJob{ins: []*utxo{u}, change: coldChange(r), feeRate: 1 + int64(r.intn(5))}
	for range n {
		j.outs = append(j.outs, plannedOut{ref: r.coldRef(r.destKind()), value: each})
	}
	return j
}
