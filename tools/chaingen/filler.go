package chaingen

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// rng is splitmix64: tiny, fast and, unlike math/rand helpers, guaranteed
// never to change its sequence between Go releases.
type rng struct{ s uint64 }

// blockRNG seeds the randomness of one block from (seed, salt, height) only,
// so a fork needs no saved generator state to be deterministic.
func blockRNG(seed, salt string, height int32) *rng {
	sum := sha256.Sum256(fmt.Appendf(nil, "chaingen-rng|%d|%s|%d|%s|%d", len(seed), seed, len(salt), salt, height))
	return &rng{s: binary.BigEndian.Uint64(sum[:])}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a value in [0, n); the modulo bias is irrelevant here.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func (r *rng) chance(percent int) bool { return r.intn(100) < percent }

// Index layout: 0 is the miner, 1..hotKeys are heavily reused "hot"
// addresses, and "fresh" addresses are drawn from a pool of coldKeys
// indices. A small demo chain sees almost only new addresses; a big
// benchmark chain reuses them a few times each, which bounds the key
// derivations (one EC multiplication each) that would otherwise dominate.
const (
	hotKeys      = 32
	hotMultisig  = 8
	coldBase     = 1 << 20
	coldKeys     = 1 << 15
	minFillerIn  = 50_000 // keep filler inputs well above dust
	maxFillerIns = 20
)

// destWeights is the filler's destination mix, in percent.
var destWeights = []struct {
	kind   ScriptKind
	weight int
}{
	{P2WPKH, 28}, {P2TR, 20}, {P2PKH, 18}, {P2SHP2WPKH, 12}, {P2WSHMultisig, 8},
	{P2PK, 4}, {BareMultisig, 4}, {P2PKUncompressed, 3}, {HashLock, 3},
}

var changeKinds = []ScriptKind{P2WPKH, P2TR, P2SHP2WPKH, P2PKH}

func (r *rng) destKind() ScriptKind {
	n := r.intn(100)
	for _, w := range destWeights {
		if n < w.weight {
			return w.kind
		}
		n -= w.weight
	}
	return P2WPKH
}

// coldRef returns a rarely reused script of kind.
func (r *rng) coldRef(kind ScriptKind) scriptRef {
	return scriptRef{kind, coldBase + uint64(r.intn(coldKeys))}
}

// destRef picks a hot script 40% of the time, otherwise a cold one.
func (r *rng) destRef(kind ScriptKind) scriptRef {
	if !r.chance(40) {
		return r.coldRef(kind)
	}
	n := hotKeys
	if kind == P2WSHMultisig || kind == BareMultisig {
		n = hotMultisig
	}
	return scriptRef{kind, uint64(1 + r.intn(n))}
}

// blockBuilder collects the txs of the block being generated.
type blockBuilder struct {
	height int32
	rng    *rng
	txs    []*wire.MsgTx
}

func (g *Generator) newBlock() *blockBuilder {
	h := g.Height() + 1
	g.wallet.mature(h)
	return &blockBuilder{height: h, rng: blockRNG(g.seed, g.salt, h)}
}

// stage adds tx to the block and applies it to the wallet right away, so
// later txs of the same block can spend its outputs.
func (g *Generator) stage(b *blockBuilder, tx *wire.MsgTx) {
	txid := tx.TxHash()
	g.wallet.applyTx(g.reg, tx, txid, b.height, false)
	g.staged[txid] = struct{}{}
	b.txs = append(b.txs, tx)
}

func (g *Generator) finish(b *blockBuilder) error {
	_, err := g.AddBlock(b.txs...)
	return err
}

// fillerJob is one planned random payment.
type fillerJob struct {
	ins     []*utxo
	outs    []plannedOut
	change  scriptRef
	feeRate int64

	tx      *wire.MsgTx
	derived []*scriptInfo // scripts this job had to derive
	err     error
}

type plannedOut struct {
	ref    scriptRef // used unless script is set
	script []byte
	value  int64
}

// fill adds up to n random payments to b (fewer if the wallet runs dry).
// All random choices are made sequentially; script derivation and signing,
// the expensive parts, then run in parallel, and the txs are staged in plan
// order, so the result does not depend on scheduling. Payments only spend
// outputs that existed before the call, which keeps them independent.
func (g *Generator) fill(b *blockBuilder, n int) error {
	jobs := make([]*fillerJob, 0, n)
	for range n {
		j := g.planFiller(b)
		if j == nil {
			break
		}
		jobs = append(jobs, j)
	}
	parallel(len(jobs), func(i int) { jobs[i].run(g.reg) })
	for _, j := range jobs {
		if j.err != nil {
			return fmt.Errorf("chaingen: payment at height %d: %w", b.height, j.err)
		}
		for _, si := range j.derived {
			g.reg.add(si)
		}
		g.stage(b, j.tx)
	}
	return nil
}

// planFiller draws one payment: 1-5 random wallet inputs (more if they are
// small), 1-3 payments of up to half the input value, an occasional
// OP_RETURN, change and a fee rate of 1-25 sat/vB. It returns nil when the
// wallet has no coins.
func (g *Generator) planFiller(b *blockBuilder) *fillerJob {
	r, pool := b.rng, g.wallet
	if len(pool.pool) == 0 {
		return nil
	}
	nIn := 1
	switch p := r.intn(100); {
	case p >= 95:
		nIn = 3 + r.intn(3)
	case p >= 80:
		nIn = 2
	}
	j := &fillerJob{}
	var total int64
	for len(pool.pool) > 0 && (len(j.ins) < nIn || total < minFillerIn && len(j.ins) < maxFillerIns) {
		u := pool.take(r.intn(len(pool.pool)))
		j.ins = append(j.ins, u)
		total += u.value
	}
	if total < minFillerIn { // only dust left: stop paying in this block
		for _, u := range j.ins {
			pool.push(u)
		}
		return nil
	}
	nPay := 1
	if r.chance(20) {
		nPay = 2 + r.intn(2)
	}
	budget := total / 2
	for range nPay {
		ref := r.destRef(r.destKind())
		v := (budget/10 + int64(r.next()%uint64(budget-budget/10+1))) / int64(nPay)
		j.outs = append(j.outs, plannedOut{ref: ref, value: max(v/1000*1000, dustLimit)})
	}
	if r.chance(2) {
		script, err := txscript.NullDataScript(fmt.Appendf(nil, "chaingen %d/%d", b.height, len(b.txs)))
		if err != nil {
			panic(err) // short constant-size payload cannot fail
		}
		j.outs = append(j.outs, plannedOut{script: script})
	}
	j.change = r.coldRef(changeKinds[r.intn(len(changeKinds))])
	j.feeRate = 1 + int64(r.intn(25))
	return j
}

// run resolves the job's scripts and signs it. It only reads reg, so jobs
// can run concurrently while nothing else touches the generator.
func (j *fillerJob) run(reg *registry) {
	resolve := func(ref scriptRef) *scriptInfo {
		if si := reg.byRef[ref]; si != nil {
			return si
		}
		for _, si := range j.derived {
			if si.ref == ref {
				return si
			}
		}
		si, err := newScript(reg.params, reg.seed, ref, reg.cachedKey)
		if err != nil {
			j.err = err
			return nil
		}
		j.derived = append(j.derived, si)
		return si
	}
	outs := make([]*wire.TxOut, len(j.outs))
	for i, o := range j.outs {
		script := o.script
		if script == nil {
			si := resolve(o.ref)
			if si == nil {
				return
			}
			script = si.pkScript
		}
		outs[i] = &wire.TxOut{Value: o.value, PkScript: script}
	}
	change := resolve(j.change)
	if change == nil {
		return
	}
	j.tx, _, j.err = buildTx(j.ins, outs, change, j.feeRate)
}

// parallel calls fn(0..n-1) on all CPUs and waits for it to finish.
func parallel(n int, fn func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
