package api

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Accounts (xpubs and output descriptors): the derived addresses of each
// chain, scanned with the gap limit as Blockbook does, their balances as of
// one index tip, and their tx lists (positions), loaded once and then
// extended block by block. An xpubAccount lives in the xpubCache between
// requests.

// DefaultGap is the gap limit when a request names none: derivation stops
// once this many unused addresses follow the last used one.
const DefaultGap = 20

// Where a tx touches an address (inputs, outputs or both).
const (
	touchInput  uint8 = 1
	touchOutput uint8 = 2
)

// xpubTx is one confirmed tx of an address or an account, by position:
// the txids are read only for the page a request returns (pageTxids).
type xpubTx struct {
	height uint32
	index  uint32 // in its block
	touch  uint8
}

// pos identifies the tx within one chain.
func (t xpubTx) pos() uint64 { return uint64(t.height)<<32 | uint64(t.index) }

// xpubAddr is one derived address.
type xpubAddr struct {
	desc bchain.AddrDesc
	name string          // the address as the API shows it
	bal  *db.AddrBalance // nil: never used
	// txs, newest first, holds every tx up to height loadedTo once loaded.
	txs      []xpubTx
	loaded   bool
	loadedTo uint32
}

// xpubChain is one chain (receive 0, change 1, ...) of derived addresses.
type xpubChain struct {
	change uint32
	addrs  []*xpubAddr
}

// xpubAccount is an account brought up to one index tip.
type xpubAccount struct {
	mu         sync.Mutex
	key        string // cache key: the descriptor (never the gap)
	cachedCost int64  // bytes, guarded by the cache's mutex

	xd *bchain.XpubDescriptor
	// gap is the largest gap limit the account was scanned with; a request
	// with a smaller one sees a prefix of each chain (see within).
	gap    int
	chains []xpubChain
	tip    db.Tip // the balances are those of this tip
	synced bool
	// merged holds every confirmed tx of the account once, newest first,
	// valid while mergedOK (built on demand after the tx lists).
	merged   []xpubTx
	mergedOK bool
	// names is the set of derived addresses, for isOwn; built on demand.
	names map[string]struct{}
	// owner is the cached account a narrower view (within) reads; the lock
	// taken and released is the owner's.
	owner *xpubAccount
}

// account returns the account of a descriptor as a request with this gap
// limit sees it, brought up to the view's tip, locked; the caller unlocks
// it with s.releaseAccount. The cache keeps one account per descriptor:
// a larger gap extends it, a smaller one reads a prefix of it.
func (s *UtxoService) account(ctx context.Context, v *view, xd *bchain.XpubDescriptor, gap int) (*xpubAccount, error) {
	a := s.xpubs.get(xd.Descriptor, func() *xpubAccount { return &xpubAccount{xd: xd, gap: gap} })
	a.mu.Lock()
	if err := s.syncAccount(ctx, v, a, gap); err != nil {
		a.mu.Unlock()
		s.xpubs.drop(a)
		return nil, err
	}
	return a.within(gap), nil
}

// releaseAccount records the account's size in the cache and unlocks it.
func (s *UtxoService) releaseAccount(a *xpubAccount) {
	if a.owner != nil {
		a = a.owner
	}
	cost := a.size()
	a.mu.Unlock()
	s.xpubs.put(a, cost)
}

// gapOf clamps a requested gap limit: 0 or less means the default; the
// maximum (a protection against huge derivations) applies silently, as in
// Blockbook.
func (s *UtxoService) gapOf(gap int) int {
	if gap <= 0 {
		return DefaultGap
	}
	return min(gap, s.cfg.Limits.MaxXpubGap)
}

// syncAccount brings the account to the view's tip: after a reorg it starts
// over, otherwise it re-reads every derived address's balance and derives
// further where the gap limit requires it.
func (s *UtxoService) syncAccount(ctx context.Context, v *view, a *xpubAccount, gap int) error {
	if a.synced && a.tip == v.tip && gap <= a.gap {
		return nil
	}
	if a.synced && !s.extendsAccountTip(v, a) {
		// A reorg (or an older snapshot than the last request's): start
		// over, as an address may have become unused.
		a.chains, a.names, a.merged, a.mergedOK, a.synced = nil, nil, nil, false, false
	}
	a.gap = max(a.gap, gap)
	if a.chains == nil {
		a.chains = make([]xpubChain, len(a.xd.Changes))
		for i, c := range a.xd.Changes {
			a.chains[i].change = c
		}
	}
	minDerived := 0
	for i := range a.chains {
		last, err := s.scanChain(ctx, v, a, &a.chains[i], minDerived)
		if err != nil {
			return err
		}
		minDerived = last
	}
	a.tip, a.synced, a.mergedOK, a.merged, a.names = v.tip, true, false, nil, nil
	return nil
}

// extendsAccountTip reports whether the view's chain contains the block the
// account was synced to.
func (s *UtxoService) extendsAccountTip(v *view, a *xpubAccount) bool {
	// The height check first: a bulk round's height rows land before its
	// tip, so a view may hold blocks above its own tip.
	return v.hasTip && v.tip.Height >= a.tip.Height && db.HoldsBlock(v.snap, a.tip.Height, a.tip.Hash)
}

// scanChain re-reads the balances of a chain's derived addresses and
// derives more until gap+1 addresses follow the last used one (so gap of
// them are unused), and at least minDerived addresses exist: Blockbook's
// rule, under which a chain with no used address has gap+1 addresses and
// the change chain reaches at least the receive chain's last used index.
// It returns the index of the last used address (0 when none is).
func (s *UtxoService) scanChain(ctx context.Context, v *view, a *xpubAccount, c *xpubChain, minDerived int) (int, error) {
	last := 0
	if len(c.addrs) > 0 {
		descs := make([]bchain.AddrDesc, len(c.addrs))
		for i, ad := range c.addrs {
			descs[i] = ad.desc
		}
		bals, err := db.ReadAddrBalances(v.snap, descs)
		if err != nil {
			return 0, err
		}
		for i, ad := range c.addrs {
			if ad.bal = bals[i]; ad.bal != nil {
				last = i
			}
		}
	}
	want := a.gap + 1
	for len(c.addrs)-last < want || len(c.addrs) < minDerived {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		from := len(c.addrs)
		to := min(max(from+want-(len(c.addrs)-last), minDerived, from+1), from+deriveChunk)
		found, err := s.deriveAddrs(ctx, v, a, c, from, to)
		if err != nil {
			return 0, err
		}
		last = max(last, found)
	}
	return last, nil
}

// derived is how many addresses the account holds: its priority for a
// derivation slot (fewest first).
func (a *xpubAccount) derived() int {
	n := 0
	for i := range a.chains {
		n += len(a.chains[i].addrs)
	}
	return n
}

// deriveAddrs appends addresses from..to-1 to a chain, holding one of the
// cache's derivation slots, and returns the index of the last used one
// among them (0 when none is).
func (s *UtxoService) deriveAddrs(ctx context.Context, v *view, a *xpubAccount, c *xpubChain, from, to int) (int, error) {
	if err := s.xpubs.startDerive(ctx, a.derived()); err != nil {
		return 0, err
	}
	defer s.xpubs.endDerive()
	descs, err := s.backend.Xpub.DeriveAddrDescs(a.xd, c.change, uint32(from), uint32(to))
	if err != nil {
		return 0, fmt.Errorf("account %s: %w", truncate(a.xd.Descriptor, 40), err)
	}
	bals, err := db.ReadAddrBalances(v.snap, descs)
	if err != nil {
		return 0, err
	}
	last := 0
	c.addrs = slices.Grow(c.addrs, len(descs))
	for i, desc := range descs {
		name, _ := s.DescAddress(desc)
		if bals[i] != nil {
			last = from + i
		}
		c.addrs = append(c.addrs, &xpubAddr{desc: desc, name: name, bal: bals[i]})
	}
	return last, nil
}

// within returns the account as a scan with a gap limit no larger than the
// one it was synced with sees it: each chain cut where that scan would stop
// (scanLength). It is a itself for the same gap; otherwise a view that
// shares the addresses (their tx lists load into the cached account) and
// merges its own tx list.
func (a *xpubAccount) within(gap int) *xpubAccount {
	if gap >= a.gap {
		return a
	}
	sub := &xpubAccount{key: a.key, xd: a.xd, gap: gap, tip: a.tip, synced: true, owner: a,
		chains: make([]xpubChain, len(a.chains))}
	minDerived := 0
	for i, c := range a.chains {
		n, last := scanLength(c.addrs, gap, minDerived)
		sub.chains[i] = xpubChain{change: c.change, addrs: c.addrs[:n:n]}
		minDerived = last
	}
	return sub
}

// scanLength replays scanChain's rule over addresses already derived: the
// number of addresses a scan with gap would derive, and the index of the
// last used one among them. A wider scan derived at least as many, so the
// result never exceeds len(addrs); it is clamped all the same.
func scanLength(addrs []*xpubAddr, gap, minDerived int) (n, last int) {
	want := gap + 1
	for n-last < want || n < minDerived {
		to := min(max(last+want, minDerived, n+1), len(addrs))
		if to <= n {
			break
		}
		for ; n < to; n++ {
			if addrs[n].bal != nil {
				last = n
			}
		}
	}
	return n, last
}

// ownNames returns the set of the account's derived addresses (built once
// per tip for the cached account, per request for a narrower view).
func (a *xpubAccount) ownNames() map[string]struct{} {
	if a.names == nil {
		a.names = map[string]struct{}{}
		for _, c := range a.chains {
			for _, ad := range c.addrs {
				a.names[ad.name] = struct{}{}
			}
		}
	}
	return a.names
}

// path is the derivation path of address index of chain change.
func (a *xpubAccount) path(change uint32, index int) string {
	return a.xd.BasePath + "/" + strconv.FormatUint(uint64(change), 10) + "/" + strconv.Itoa(index)
}

// usedAddrs calls fn for every address with txs, chain by chain.
func (a *xpubAccount) usedAddrs(fn func(ad *xpubAddr) error) error {
	for _, c := range a.chains {
		for _, ad := range c.addrs {
			if ad.bal != nil {
				if err := fn(ad); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// loadTxs makes every used address's tx list complete up to the
// account's tip, reading only the rows added since the last load, on
// accountReadWorkers goroutines (each address is a seek of its own).
func (s *UtxoService) loadTxs(ctx context.Context, v *view, a *xpubAccount) error {
	var stale []*xpubAddr
	_ = a.usedAddrs(func(ad *xpubAddr) error {
		if ad.loaded && (ad.loadedTo >= a.tip.Height || len(ad.txs) == int(ad.bal.Txs)) {
			ad.loadedTo = a.tip.Height
		} else {
			stale = append(stale, ad)
		}
		return nil
	})
	if len(stale) == 0 {
		return nil
	}
	a.mergedOK = false
	return eachInParallel(ctx, len(stale), accountReadWorkers, func(i int) error {
		return loadAddrTxs(v, stale[i], a.tip.Height)
	})
}

// loadAddrTxs reads an address's rows from its last load up to height tip.
// Positions only: the txids of the page a request returns are read then.
func loadAddrTxs(v *view, ad *xpubAddr, tip uint32) error {
	low := uint32(0)
	if ad.loaded {
		low = ad.loadedTo + 1
	}
	var fresh []xpubTx
	err := db.IterateAddrTxPositions(v.snap, ad.desc, tip, low, func(row db.AddrTxsAt) (bool, error) {
		for _, t := range row.Txs {
			fresh = append(fresh, xpubTx{height: row.Height, index: t.Index, touch: touchOf(t.Indexes)})
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	ad.txs = append(fresh, ad.txs...)
	ad.loaded, ad.loadedTo = true, tip
	if len(ad.txs) != int(ad.bal.Txs) {
		return fmt.Errorf("%w: address %s lists %d txs, its balance record counts %d", db.ErrCorrupt, ad.name, len(ad.txs), ad.bal.Txs)
	}
	return nil
}

// touchOf summarizes index codes (v >= 0 output v, v < 0 input ^v).
func touchOf(indexes []int32) uint8 {
	var t uint8
	for _, i := range indexes {
		if i < 0 {
			t |= touchInput
		} else {
			t |= touchOutput
		}
	}
	return t
}

// confirmedTxs returns every confirmed tx of the account once, in
// Blockbook's order (see mergeAccountTxs), loading and merging the lists
// if needed.
func (s *UtxoService) confirmedTxs(ctx context.Context, v *view, a *xpubAccount) ([]xpubTx, error) {
	if err := s.loadTxs(ctx, v, a); err != nil {
		return nil, err
	}
	if !a.mergedOK {
		a.merged, a.mergedOK = mergeAccountTxs(a.txLists(), nil), true
	}
	return a.merged, nil
}

// txLists returns the used addresses' tx lists, chain by chain in index
// order (the order Blockbook walks an account's addresses in).
func (a *xpubAccount) txLists() [][]xpubTx {
	var lists [][]xpubTx
	_ = a.usedAddrs(func(ad *xpubAddr) error { lists = append(lists, ad.txs); return nil })
	return lists
}

// mergeAccountTxs merges per-address lists (each newest block first, a
// block's txs in Blockbook's order) as Blockbook's account query does: the
// lists are concatenated in address order, keeping each tx at its first
// entry that keep accepts (keep nil accepts all), and then sorted with
// sort.Stable by height descending and, within a height, with Blockbook's
// comparison "a tx that spends from its address sorts before or with any
// other". That comparison is not a strict order, so the result depends on
// the sort algorithm; using the same sort on the same input gives the
// same order as Blockbook.
func mergeAccountTxs(lists [][]xpubTx, keep func(xpubTx) bool) []xpubTx {
	seen := make(map[uint64]bool)
	var out []xpubTx
	for _, l := range lists {
		for _, t := range l {
			if seen[t.pos()] || keep != nil && !keep(t) {
				continue
			}
			seen[t.pos()] = true
			out = append(out, t)
		}
	}
	sort.Stable(blockbookAccountOrder(out))
	return out
}

// blockbookAccountOrder is Blockbook's sort order of account txs.
type blockbookAccountOrder []xpubTx

func (o blockbookAccountOrder) Len() int      { return len(o) }
func (o blockbookAccountOrder) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o blockbookAccountOrder) Less(i, j int) bool {
	if o[i].height == o[j].height {
		return o[i].touch&touchInput >= o[j].touch&touchInput
	}
	return o[i].height > o[j].height
}
