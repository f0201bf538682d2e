package api

import (
	"unsafe"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// The account cache is charged by the bytes its accounts hold on the heap,
// counted from the actual slices and strings: every derived address's
// struct, script, name and balance, the capacity (not just the length) of
// every slice, and the address set. Allocations are rounded up to Go's
// small size classes (multiples of 16 bytes), and a map slot is charged its
// key plus a fixed overhead, as the runtime's map internals are not visible.
const (
	// mapSlotOverhead is a map entry's control byte, its share of empty
	// slots at the maximum load and of the table's growth (measured with
	// TestXpubAccountSizeMatchesHeap).
	mapSlotOverhead  = 24
	xpubAccountBytes = int64(unsafe.Sizeof(xpubAccount{}))
	xpubAddrBytes    = int64(unsafe.Sizeof(xpubAddr{}))
	xpubTxBytes      = int64(unsafe.Sizeof(xpubTx{}))
	addrBalanceBytes = int64(unsafe.Sizeof(db.AddrBalance{}))
	pointerBytes     = int64(unsafe.Sizeof((*xpubAddr)(nil)))
	stringBytes      = int64(unsafe.Sizeof(""))
	xpubDescBytes    = int64(unsafe.Sizeof(bchain.XpubDescriptor{}))
)

// heapBytes is the size of a heap allocation of n bytes: small ones take
// a whole size class (approximated as the next multiple of 16).
func heapBytes(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n <= 8 {
		return 8
	}
	return (n + 15) &^ 15
}

// size returns the bytes the account holds: the cache's measure of it.
func (a *xpubAccount) size() int64 {
	n := heapBytes(xpubAccountBytes) + heapBytes(xpubDescBytes) + heapBytes(int64(len(a.xd.Descriptor))) +
		heapBytes(int64(len(a.key)))
	n += heapBytes(int64(cap(a.chains)) * int64(unsafe.Sizeof(xpubChain{})))
	for _, c := range a.chains {
		n += heapBytes(int64(cap(c.addrs)) * pointerBytes)
		for _, ad := range c.addrs {
			n += ad.size()
		}
	}
	n += heapBytes(int64(cap(a.merged)) * xpubTxBytes)
	if a.names != nil {
		// The keys share the addresses' name strings; a slot holds the
		// string header.
		n += int64(len(a.names)) * (stringBytes + mapSlotOverhead)
	}
	return n
}

// size returns the bytes one derived address holds.
func (ad *xpubAddr) size() int64 {
	n := heapBytes(xpubAddrBytes) + heapBytes(int64(cap(ad.desc))) + heapBytes(int64(len(ad.name)))
	if ad.bal != nil {
		n += heapBytes(addrBalanceBytes)
	}
	return n + heapBytes(int64(cap(ad.txs))*xpubTxBytes)
}
