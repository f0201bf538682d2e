package db

import (
	"fmt"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
)

// EthGroup connects consecutive blocks into one write (the catch-up's bulk
// connect, as Blockbook's for Ethereum-type chains): each block's rows go
// into one batch, and the rows later blocks rewrite (an account's
// addressContracts row, a contract's row) stay decoded in the group until
// Flush packs each once and writes the batch with the new tip. The write
// is as atomic as a single block's: a crash leaves the index at the last
// flushed tip, and the rows equal a block-by-block connect's.
type EthGroup struct {
	x      *EthIndex
	b      *Batch
	tip    Tip
	hasTip bool
	blocks int
	// broken is why the group can no longer be written: a block failed
	// after its rows entered the batch, or a write failed.
	broken error

	rows     map[string]*AddrContracts // pending addressContracts rows (Txs 0: deleted)
	rowOrder []string

	// mu guards what PrepareBlock reads on the fetch workers.
	mu        sync.Mutex
	contracts map[string]*ContractInfo // pending contracts rows (nil: deleted)
	conOrder  []string
	// meta is the token metadata fetched during the group, so that blocks
	// prepared before the contract's first block is connected ask the
	// node once (Blockbook asks nothing during sync; we ask once).
	meta map[string]*bchain.EthContractInfo
}

// groupMetaMax bounds the group's metadata cache (entries).
const groupMetaMax = 4096

// NewGroup opens a group on the index's tip. Until Close, blocks are
// connected through the group only (ConnectBlock of the index would not
// see its pending rows).
func (x *EthIndex) NewGroup() (*EthGroup, error) {
	tip, ok, err := x.tipForWrite()
	if err != nil {
		return nil, err
	}
	g := &EthGroup{x: x, b: x.db.NewBatch(), tip: tip, hasTip: ok}
	g.reset()
	if !x.group.CompareAndSwap(nil, g) {
		g.b.Destroy()
		return nil, fmt.Errorf("db: an Ethereum group is already open")
	}
	return g, nil
}

func (g *EthGroup) reset() {
	g.blocks, g.rows, g.rowOrder = 0, map[string]*AddrContracts{}, nil
	g.mu.Lock()
	g.contracts, g.conOrder = map[string]*ContractInfo{}, nil
	if g.meta == nil || len(g.meta) > groupMetaMax {
		g.meta = map[string]*bchain.EthContractInfo{}
	}
	g.mu.Unlock()
}

// ConnectBlock adds blk, which must extend the group's tip, to the
// group. A block that does not extend it (ErrNotNextBlock) or carries no
// Ethereum data leaves the group as it was; any other failure breaks the
// group (Flush then writes nothing).
func (g *EthGroup) ConnectBlock(blk *bchain.Block) error {
	if g.broken != nil {
		return g.broken
	}
	if blk.Eth == nil {
		return errNoEthData(blk)
	}
	if err := extendsTip(g.tip, g.hasTip, blk); err != nil {
		return err
	}
	if _, err := g.x.putBlock(g.b, blk, g); err != nil {
		g.broken = err
		return err
	}
	g.tip, g.hasTip = Tip{Height: blk.Height, Hash: blk.Hash}, true
	g.blocks++
	return nil
}

// Blocks is the number of blocks connected since the last Flush.
func (g *EthGroup) Blocks() int { return g.blocks }

// Bytes is the size of the batch so far (without the pending rows).
func (g *EthGroup) Bytes() int64 { return g.b.bytes }

// Flush writes the group's blocks, their pending rows and the new tip in
// one atomic write; the group then goes on from that tip.
func (g *EthGroup) Flush() error {
	if g.broken != nil {
		return g.broken
	}
	if g.blocks == 0 {
		return nil
	}
	sizes := make([]int, len(g.rowOrder))
	for i, k := range g.rowOrder {
		if a := g.rows[k]; a.Txs == 0 {
			g.b.del(CFAddressContracts, []byte(k))
		} else {
			v := packAddrContracts(a)
			g.b.put(CFAddressContracts, []byte(k), v)
			sizes[i] = len(v)
		}
	}
	for _, k := range g.conOrder {
		if c := g.contracts[k]; c == nil {
			g.b.del(CFContracts, []byte(k))
		} else {
			g.b.put(CFContracts, []byte(k), packContractInfo(c))
		}
	}
	writeTip(g.b, g.tip)
	if err := g.x.db.write(g.b); err != nil {
		g.broken = err
		return err
	}
	for i, k := range g.rowOrder {
		if sizes[i] > 0 {
			g.x.held.put(k, g.rows[k], sizes[i])
		}
	}
	g.b.Destroy()
	g.b = g.x.db.NewBatch()
	g.reset()
	return nil
}

// Close ends the group; what was not flushed is dropped (the index's held
// rows never saw it, so they still equal the store).
func (g *EthGroup) Close() {
	g.x.group.CompareAndSwap(g, nil)
	g.b.Destroy()
	g.mu.Lock()
	g.contracts, g.meta = nil, nil
	g.mu.Unlock()
}

// row returns a pending addressContracts row (nil, true: deleted).
func (g *EthGroup) row(k string) (*AddrContracts, bool) {
	if g == nil {
		return nil, false
	}
	a, ok := g.rows[k]
	if ok && a.Txs == 0 {
		return nil, true
	}
	return a, ok
}

func (g *EthGroup) setRow(k string, a *AddrContracts) {
	if _, ok := g.rows[k]; !ok {
		g.rowOrder = append(g.rowOrder, k)
	}
	g.rows[k] = a
}

// contract returns a pending contracts row (nil, true: deleted).
func (g *EthGroup) contract(k string) (*ContractInfo, bool) {
	if g == nil {
		return nil, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.contracts[k]
	return c, ok
}

func (g *EthGroup) setContract(k string, c *ContractInfo) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.contracts[k]; !ok {
		g.conOrder = append(g.conOrder, k)
	}
	g.contracts[k] = c
}

// contractState tells PrepareBlock whether the group has a pending
// contracts row for k (pending) and whether that row exists.
func (g *EthGroup) contractState(k string) (pending, exists bool) {
	c, ok := g.contract(k)
	return ok, c != nil
}

// fetchedMeta returns the metadata of k fetched during the group (nil:
// none).
func (g *EthGroup) fetchedMeta(k string) *bchain.EthContractInfo {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.meta[k]
}

func (g *EthGroup) keepMeta(k string, info *bchain.EthContractInfo) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.meta != nil {
		g.meta[k] = info
	}
}
