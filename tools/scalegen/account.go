package scalegen

import (
	"crypto/sha256"
	"sync"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"
)

// The HD account is one BIP84 wallet (m/84'/1'/0', P2WPKH, real keys from
// a fixed seed) among the chain's fake-key addresses, so that the
// indexer's xpub queries can be measured at scale. It is active from the
// middle of the chain (when native segwit appears), pays and spends in a
// fixed share of txs, and takes new addresses in order, receive addresses
// reused like a wallet's and a fresh change address per spend: no gaps, so
// a gap-limit scan finds every used address.

// Address ids of the account: the top bit, then the chain (0 receive, 1
// change), then the index; ordinary ids never get that high.
const (
	accountBit  = 1 << 31
	chainShift  = 30
	indexMask   = 1<<chainShift - 1
	accountFrom = 0.5 // era of the account's first tx
)

func accountID(chain, index uint32) uint32 { return accountBit | chain<<chainShift | index }

func isAccount(id uint32) bool { return id&accountBit != 0 }

// vpubVersion is SLIP-132's version of a testnet P2WPKH account key.
var vpubVersion = []byte{0x04, 0x5f, 0x1c, 0xf6}

// hdKeys caches the account's keys, derived lazily: scripts are written
// many times per address, and derivation costs tens of microseconds.
var hdKeys struct {
	once   sync.Once
	xpub   string
	chains [2]*hdkeychain.ExtendedKey // private m/84'/1'/0'/chain
	mu     sync.Mutex
	pub    [2][][33]byte
	hash   [2][][20]byte
}

// hdInit derives the account from its fixed seed. A failure is a bug (or
// a 2^-127 accident of this seed), not a condition to handle.
func hdInit() {
	seed := sha256.Sum256([]byte("openexplorer scalegen HD account"))
	k, err := hdkeychain.NewMaster(seed[:], &chaincfg.RegressionNetParams)
	for _, step := range []uint32{84, 1, 0} {
		if err == nil {
			k, err = k.Derive(hdkeychain.HardenedKeyStart + step)
		}
	}
	var pub *hdkeychain.ExtendedKey
	if err == nil {
		pub, err = k.Neuter()
	}
	if err == nil {
		pub, err = pub.CloneWithVersion(vpubVersion)
	}
	for c := range hdKeys.chains {
		if err == nil {
			hdKeys.chains[c], err = k.Derive(uint32(c))
		}
	}
	if err != nil {
		panic("scalegen: deriving the HD account: " + err.Error())
	}
	hdKeys.xpub = pub.String()
}

// AccountXpub is the account's extended public key (a vpub: BIP84 P2WPKH
// on a test network).
func AccountXpub() string {
	hdKeys.once.Do(hdInit)
	return hdKeys.xpub
}

// accountKey returns the compressed public key and its hash160 of an
// account address id, deriving the keys up to it on first use.
func accountKey(id uint32) (pub [33]byte, hash [20]byte) {
	hdKeys.once.Do(hdInit)
	c, i := id>>chainShift&1, int(id&indexMask)
	hdKeys.mu.Lock()
	defer hdKeys.mu.Unlock()
	for n := len(hdKeys.pub[c]); n <= i; n++ {
		child, err := hdKeys.chains[c].Derive(uint32(n))
		var pk []byte
		if err == nil {
			var k *btcec.PublicKey
			if k, err = child.ECPubKey(); err == nil {
				pk = k.SerializeCompressed()
			}
		}
		if err != nil {
			panic("scalegen: deriving an HD account key: " + err.Error())
		}
		var p [33]byte
		var h [20]byte
		copy(p[:], pk)
		copy(h[:], address.Hash160(pk))
		hdKeys.pub[c] = append(hdKeys.pub[c], p)
		hdKeys.hash[c] = append(hdKeys.hash[c], h)
	}
	return hdKeys.pub[c][i], hdKeys.hash[c][i]
}

// account is the generator's side of the wallet: its share of txs, the
// next unused index of each chain and its coins (kept apart, like the
// whales', so that ordinary spends never take them).
type account struct {
	rate  float64 // chance per tx of a payment to it, and of a spend
	next  [2]uint32
	utxos []utxo
	// per tx
	spending, touched bool
}

// AccountStats describe the HD account at the tip.
type AccountStats struct {
	Xpub      string // vpub of m/84'/1'/0'
	Txs       int    // txs paying it or spending from it
	Addresses int    // used addresses, both chains
	Balance   int64  // satoshi
}

// accountRate is the account's share: 0.45% of txs pay it and as many
// spend from it, which with its half of the chain makes a little over 0.5%
// of all txs (about 105k on a 20 M chain); higher on small chains so that
// tests see a few dozen txs.
func accountRate(txs int) float64 {
	return min(0.02, max(0.0045, 80/float64(max(txs, 1))))
}

// spendAccount makes the tx, in the account's share, a spend of one to
// three of its coins; false when it is not its turn or it has none.
func (s *state) spendAccount() bool {
	a := &s.acct
	if s.era < accountFrom || len(a.utxos) == 0 || s.rng.Float64() >= a.rate {
		return false
	}
	for n := 1 + s.rng.IntN(3); n > 0 && len(a.utxos) > 0; n-- {
		i := s.rng.IntN(len(a.utxos))
		u := a.utxos[i]
		a.utxos[i] = a.utxos[len(a.utxos)-1]
		a.utxos = a.utxos[:len(a.utxos)-1]
		if int(u.height) == s.height {
			s.stats.InBlockSpends++
		}
		s.ins = append(s.ins, u)
	}
	a.spending, a.touched = true, true
	return true
}

// payAccount draws whether a payment's first output goes to the account
// (never from the account itself).
func (s *state) payAccount() bool {
	a := &s.acct
	if s.era < accountFrom || a.spending || s.rng.Float64() >= a.rate {
		return false
	}
	a.touched = true
	return true
}

// receiveAddr picks the receive address of a payment: the next new one
// for one payment in ten, else mostly one of the last few, sometimes any
// older one; about twenty txs per address with the spends of its coins.
func (s *state) receiveAddr() uint32 {
	n := s.acct.next[0]
	r := s.rng.Float64()
	switch {
	case n == 0 || r < 0.1:
		s.acct.next[0]++
		return accountID(0, n)
	case r < 0.8:
		return accountID(0, n-1-uint32(s.rng.IntN(int(min(n, 5)))))
	}
	return accountID(0, uint32(s.rng.IntN(int(n))))
}

// changeAddr is the next unused change address: each spend takes a new one.
func (s *state) changeAddr() uint32 {
	n := s.acct.next[1]
	s.acct.next[1]++
	return accountID(1, n)
}

// accountStats sums up the account at the tip.
func (s *state) accountStats() AccountStats {
	st := AccountStats{Xpub: AccountXpub(), Txs: s.stats.Account.Txs, Addresses: int(s.acct.next[0] + s.acct.next[1])}
	for _, u := range s.acct.utxos {
		st.Balance += u.value
	}
	return st
}
