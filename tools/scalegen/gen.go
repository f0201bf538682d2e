// Package scalegen generates a mainnet-shaped Bitcoin chain of tens of
// millions of transactions directly as raw regtest blocks (no node, trivial
// proof of work), and serves it to blockbook as a node would: JSON-RPC for
// the chain's shape and the P2P port for block bodies. Scripts only look
// valid (signatures are filler: the indexer verifies none), but txids,
// merkle roots, previous-block hashes and proof of work are real.
//
// The statistics follow Bitcoin mainnet's over its history, compressed
// into the chain's length: blocks fill up over the first 40% of the chain;
// pay-to-pubkey early, P2PKH dominant until the middle, P2SH from 20%,
// native segwit from 50% and taproot from 80%; mostly one or two inputs
// and two outputs, with consolidations and batched payouts; a share of
// payments to addresses seen before; the unspent set growing by about half
// an output per tx; and three exchange-like whales that receive and spend
// in a fixed share of all transactions (the largest in about 6%, which is
// more than a million txs on a 20 M chain); and one HD account with real
// keys, whose xpub touches about 0.5% of all txs (account.go).
package scalegen

import (
	"math/rand/v2"
)

// Options shape a generated chain.
type Options struct {
	Txs         int    // target number of transactions (coinbases included)
	MaxBlockTxs int    // transactions of a full block (default 2500)
	Seed        uint64 // random seed (the chain is a pure function of the options)
}

// utxo is an unspent output of the generated chain.
type utxo struct {
	txid   [32]byte
	vout   uint32
	addr   uint32
	value  int64
	height uint32
	kind   uint8
}

// Whales are address ids 0..numWhales-1; whaleShare is, per whale, the
// chance that a tx pays it and the chance that a tx is its spend.
const numWhales = 3

var (
	whaleRecv  = [numWhales]float64{0.04, 0.02, 0.01}
	whaleSpend = [numWhales]float64{0.02, 0.01, 0.005}
	whaleKinds = [numWhales]uint8{kindP2PKH, kindP2SH, kindP2WPKH}
)

// Stats describe a generated chain.
type Stats struct {
	Blocks, Txs, Inputs, Outputs int
	Addresses                    int
	UTXOs                        int
	WhaleTxs                     [numWhales]int   // txs touching each whale
	WhaleBalance                 [numWhales]int64 // satoshi at the tip
	Account                      AccountStats
	OutputsByKind                map[string]int
	InBlockSpends                int // inputs spending an output of the same block
	Bytes                        int64
}

// NumWhales is the number of whale addresses.
const NumWhales = numWhales

// WhaleScript is the output script of whale w (0 is the largest).
func WhaleScript(w int) []byte { return appendPkScript(nil, whaleKinds[w], uint32(w)) }

// state is the generator's memory: the unspent set (general, per whale
// and the account's) and the script kind of every ordinary address.
type state struct {
	o        Options
	rng      *rand.Rand
	pool     []utxo
	whales   [numWhales][]utxo
	acct     account
	addrKind []uint8
	height   int
	blocks   int
	era      float64 // position in the chain, 0..1
	stats    Stats
	// per-tx scratch
	ins        []utxo
	outs       []txOut
	whaleTouch [numWhales]bool
}

type txOut struct {
	addr  uint32
	kind  uint8
	value int64
	data  bool // OP_RETURN
}

func newState(o Options) *state {
	if o.MaxBlockTxs <= 0 {
		o.MaxBlockTxs = 2500
	}
	s := &state{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x5ca1e)), acct: account{rate: accountRate(o.Txs)}}
	s.blocks = (o.Txs*10 + o.MaxBlockTxs*8 - 1) / (o.MaxBlockTxs * 8)
	if s.blocks < 1 {
		s.blocks = 1
	}
	for w := 0; w < numWhales; w++ {
		s.addrKind = append(s.addrKind, whaleKinds[w])
	}
	s.stats.OutputsByKind = map[string]int{}
	return s
}

// blockTxs is the number of txs (coinbase included) of block h: a ramp over
// the first 40% of the chain, then full blocks.
func (s *state) blockTxs(h int) int {
	f := float64(h) / float64(s.blocks)
	n := float64(s.o.MaxBlockTxs)
	if f < 0.4 {
		n *= f / 0.4
	}
	return max(1, int(n))
}

// newKind draws the script kind of a new address in the current era.
func (s *state) newKind() uint8 {
	f := s.era
	var w [numKinds]float64
	w[kindP2PK] = max(0, 0.5-5*f)          // gone by 10%
	w[kindP2PKH] = 1.0 - 0.8*f             // dominant, declining
	w[kindP2SH] = ramp(f, 0.2, 0.4) * 0.35 // from 2012
	w[kindP2WPKH] = ramp(f, 0.5, 0.8) * 0.9
	w[kindP2WSH] = ramp(f, 0.5, 0.7) * 0.08
	w[kindP2TR] = ramp(f, 0.8, 1.0) * 0.35
	total := 0.0
	for _, x := range w {
		total += x
	}
	r := s.rng.Float64() * total
	for k, x := range w {
		if r < x {
			return uint8(k)
		}
		r -= x
	}
	return kindP2PKH
}

func ramp(f, from, to float64) float64 {
	switch {
	case f <= from:
		return 0
	case f >= to:
		return 1
	}
	return (f - from) / (to - from)
}

// payee draws the address of an output: a new one, a recently used one or
// an old one with a heavy-tailed preference for early (popular) addresses.
func (s *state) payee() (uint32, uint8) {
	n := len(s.addrKind)
	r := s.rng.Float64()
	switch {
	case n > numWhales+100 && r < 0.25: // recent
		id := n - 1 - s.rng.IntN(min(n-numWhales, 200_000))
		return uint32(id), s.addrKind[id]
	case n > numWhales+100 && r < 0.40: // popular
		u := s.rng.Float64()
		id := numWhales + int(float64(n-numWhales)*u*u*u)
		return uint32(id), s.addrKind[id]
	}
	k := s.newKind()
	s.addrKind = append(s.addrKind, k)
	return uint32(n), k
}

// take removes a random unspent output from the pool: mostly recent ones
// (most coins on mainnet move soon after they are received), some old.
func (s *state) take() (utxo, bool) {
	n := len(s.pool)
	if n == 0 {
		return utxo{}, false
	}
	var i int
	if s.rng.Float64() < 0.7 {
		i = n - 1 - s.rng.IntN(min(n, 50_000))
	} else {
		i = s.rng.IntN(n)
	}
	u := s.pool[i]
	s.pool[i] = s.pool[n-1]
	s.pool = s.pool[:n-1]
	if int(u.height) == s.height {
		s.stats.InBlockSpends++
	}
	return u, true
}

func (s *state) takeWhale(w int) (utxo, bool) {
	p := s.whales[w]
	if len(p) == 0 {
		return utxo{}, false
	}
	i := len(p) - 1 - s.rng.IntN(min(len(p), 1000))
	u := p[i]
	p[i] = p[len(p)-1]
	s.whales[w] = p[:len(p)-1]
	return u, true
}

// numInputs draws the inputs of an ordinary payment.
func (s *state) numInputs() int {
	r := s.rng.Float64()
	switch {
	case r < 0.75:
		return 1
	case r < 0.90:
		return 2
	case r < 0.95:
		return 3
	case r < 0.995:
		return 4 + s.rng.IntN(5)
	}
	return 11 + s.rng.IntN(10)
}

func (s *state) numOutputs() int {
	r := s.rng.Float64()
	switch {
	case r < 0.10:
		return 1
	case r < 0.88:
		return 2
	}
	return 3 + s.rng.IntN(3)
}
