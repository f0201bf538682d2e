package btc

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"hash"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"github.com/openexplorer/blockbook/bchain"
)

// Deriving the public keys of one chain. hdkeychain's Derive decompresses
// the parent's serialized key for every child, and ECPubKey decompresses
// the child's again: two square roots per address, about a third of the
// time an xpub's cold query spends deriving. A chainKey parses the parent
// once and keeps each child as a point.

// deriveWorkers is how many goroutines derive one range. The API runs at
// most NumCPU/2 derivations at once (api.xpubCache), so two each keep a
// burst of account queries within the machine's cores.
const deriveWorkers = 2

// minParallelDerive is the smallest range split between workers: below it
// starting a goroutine costs more than it saves.
const minParallelDerive = 8

// accountKey is an XpubDescriptor's Key: the account's extended key and
// the keys of the chains derived so far. The API keeps a cached account's
// descriptor, so its chain keys are derived once, not once per batch.
type accountKey struct {
	ext    *hdkeychain.ExtendedKey
	mu     sync.Mutex
	chains map[uint32]*chainKey
}

// chain returns the key of chain change (0 receive, 1 change, ...).
func (k *accountKey) chain(change uint32) (*chainKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.chains[change]; ok {
		return c, nil
	}
	ext, err := k.ext.Derive(change)
	var c *chainKey
	if err == nil {
		c, err = newChainKey(ext)
	}
	if err != nil {
		return nil, fmt.Errorf("derive chain %d: %w", change, err)
	}
	if k.chains == nil {
		k.chains = map[uint32]*chainKey{}
	}
	k.chains[change] = c
	return c, nil
}

// chainKey is a non-hardened parent (an account's chain) ready to derive
// children from.
type chainKey struct {
	chainCode []byte
	serial    []byte // the compressed parent key, the HMAC's input
	point     btcec.JacobianPoint
}

func newChainKey(k *hdkeychain.ExtendedKey) (*chainKey, error) {
	pub, err := k.ECPubKey()
	if err != nil {
		return nil, err
	}
	c := &chainKey{chainCode: k.ChainCode(), serial: pub.SerializeCompressed()}
	pub.AsJacobian(&c.point)
	return c, nil
}

// childDeriver derives children of one chainKey; it reuses its HMAC, so
// each goroutine has its own.
type childDeriver struct {
	c    *chainKey
	mac  hash.Hash
	data [37]byte
	sum  []byte
}

func (c *chainKey) deriver() *childDeriver {
	d := &childDeriver{c: c, mac: hmac.New(sha512.New, c.chainCode)}
	copy(d.data[:33], c.serial)
	return d
}

// child returns the public key of non-hardened child i (BIP32's CKDpub).
func (d *childDeriver) child(i uint32) (*btcec.PublicKey, error) {
	binary.BigEndian.PutUint32(d.data[33:], i)
	d.mac.Reset()
	d.mac.Write(d.data[:])
	d.sum = d.mac.Sum(d.sum[:0])
	var il btcec.ModNScalar
	if overflow := il.SetByteSlice(d.sum[:32]); overflow || il.IsZero() {
		return nil, hdkeychain.ErrInvalidChild
	}
	var ilG, child btcec.JacobianPoint
	btcec.ScalarBaseMultNonConst(&il, &ilG)
	btcec.AddNonConst(&ilG, &d.c.point, &child)
	if child.Z.IsZero() || child.X.IsZero() && child.Y.IsZero() {
		return nil, hdkeychain.ErrInvalidChild
	}
	child.ToAffine()
	return btcec.NewPublicKey(&child.X, &child.Y), nil
}

// deriveRange returns the output scripts of children [from, to) of a
// chain, split over deriveWorkers goroutines when the range is large.
func (p *XpubParser) deriveRange(c *chainKey, st bchain.XpubScriptType, change, from, to uint32) ([]bchain.AddrDesc, error) {
	out := make([]bchain.AddrDesc, to-from)
	part := func(lo, hi uint32) error {
		d := c.deriver()
		for i := lo; i < hi; i++ {
			pub, err := d.child(i)
			if err != nil {
				// ErrInvalidChild has a probability below 2^-127; like
				// every wallet we would skip the index, but an account
				// relying on that is not worth a special case.
				return fmt.Errorf("derive %d/%d: %w", change, i, err)
			}
			if out[i-from], err = p.scriptOf(pub, st); err != nil {
				return err
			}
		}
		return nil
	}
	n := to - from
	if n < minParallelDerive {
		return out, part(from, to)
	}
	errs := make([]error, deriveWorkers)
	var wg sync.WaitGroup
	for w := range uint32(deriveWorkers) {
		lo, hi := from+n*w/deriveWorkers, from+n*(w+1)/deriveWorkers
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = part(lo, hi)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
