package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Block filters, as Blockbook serves them: REST block-filters and the
// websocket's getBlockFilter and getBlockFiltersBatch. Like Blockbook, every
// call first requires scriptType to equal the configured
// block_filter_scripts (Trezor's client sends "taproot-noordinals"; an empty
// scriptType matches only an empty setting), and the client's M is ignored:
// answers state the P and M the index was built with.

const (
	// Blockbook's page size of getBlockFiltersBatch: default and maximum.
	defaultFiltersBatch = 1000
	maxFiltersBatch     = 10000
	// maxBlockFiltersSpan caps the heights of one REST block-filters answer.
	// Blockbook has no cap (an open range from 0 walks the whole chain);
	// this is a deliberate deviation, listed in docs/api.md.
	maxBlockFiltersSpan = 10000
)

// BlockFilters answers REST block-filters/?scriptType=&lastN=&from=&to=.
// Numbers parse as Blockbook parses them (anything else counts as 0); lastN
// > 0 selects the last N blocks, otherwise from..to with to defaulting to
// the tip. Heights outside the index (negative ones included, as Blockbook
// reads them as uint32) answer an empty blockHash and filter.
func (s *UtxoService) BlockFilters(_ context.Context, scriptType, lastN, from, to string) (*BlockFilters, error) {
	atoi := func(v string) int {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0
		}
		return n
	}
	n, lo, hi := atoi(lastN), atoi(from), atoi(to)
	p := s.cfg.BlockFilters
	if scriptType != p.Scripts {
		return nil, userErr("Invalid scriptType %s. Use %s", truncate(scriptType, 100), p.Scripts)
	}
	if n == 0 && lo == 0 && hi == 0 {
		return nil, userErr("Missing parameters")
	}
	if lo > hi {
		return nil, userErr("Invalid parameters - from > to")
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	best := 0
	if v.hasTip {
		best = int(v.tip.Height)
	}
	if n > 0 {
		hi = best
		lo = hi - n + 1
	} else if hi == 0 {
		hi = best
	}
	// hi >= lo here; the difference fits a uint64 whatever the values.
	if span := uint64(hi) - uint64(lo) + 1; span > maxBlockFiltersSpan || span == 0 {
		return nil, userErr("Too many blocks requested, at most %d; use a narrower from-to range or a smaller lastN", maxBlockFiltersSpan)
	}
	out := &BlockFilters{P: p.P, M: p.M(), ZeroedKey: p.ZeroedKey, BlockFilters: make(map[int]BlockFilterEntry, hi-lo+1)}
	for h := lo; ; h++ {
		var e BlockFilterEntry
		meta, err := db.ReadBlockMeta(v.snap, uint32(h))
		if err != nil {
			return nil, err
		}
		if meta != nil {
			f, err := db.ReadBlockFilter(v.snap, meta.Hash)
			if err != nil {
				return nil, err
			}
			e = BlockFilterEntry{BlockHash: meta.Hash.String(), Filter: hex.EncodeToString(f)}
		}
		out.BlockFilters[h] = e
		if h == hi {
			break
		}
	}
	return out, nil
}

// BlockFilter answers getBlockFilter: the filter of the block with the given
// hash, empty when it has none or the hash is not in the active chain (as
// Blockbook, which does not tell an unknown block from an empty filter).
func (s *UtxoService) BlockFilter(_ context.Context, scriptType, blockHash string, _ uint64) (*BlockFilterResult, error) {
	p := s.cfg.BlockFilters
	if scriptType != p.Scripts {
		return nil, userErr("Unsupported script type %s", truncate(scriptType, 100))
	}
	hash, err := parseBlockHash(blockHash)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	f, err := db.ReadBlockFilter(v.snap, hash)
	if err != nil {
		return nil, err
	}
	return &BlockFilterResult{P: p.P, M: p.M(), ZeroedKey: p.ZeroedKey, BlockFilter: hex.EncodeToString(f)}, nil
}

// BlockFiltersBatch answers getBlockFiltersBatch: the filters of the blocks
// after bestKnownBlockHash up to the tip, at most pageSize of them (default
// 1000, more than 10000 is refused), each as "height:hash:filter"; an empty
// list when the client is up to date. Like Blockbook, the node tells the
// height of bestKnownBlockHash, so an orphaned block the node still knows
// counts as its height (btcd does not report side-chain heights: "Block not
// found" there).
func (s *UtxoService) BlockFiltersBatch(ctx context.Context, scriptType, bestKnownBlockHash string, pageSize int, _ uint64) (*BlockFiltersBatchResult, error) {
	p := s.cfg.BlockFilters
	if scriptType != p.Scripts {
		return nil, userErr("Unsupported script type %s", truncate(scriptType, 100))
	}
	if !p.Enabled() {
		return nil, userErr("Not supported")
	}
	if pageSize > maxFiltersBatch {
		return nil, userErr("pageSize max %d", maxFiltersBatch)
	}
	if pageSize <= 0 {
		pageSize = defaultFiltersBatch
	}
	hash, err := parseBlockHash(bestKnownBlockHash)
	if err != nil {
		return nil, err
	}
	known, err := s.backend.Chain.BlockHeight(ctx, hash)
	if errors.Is(err, bchain.ErrBlockNotFound) {
		return nil, errBlockNotFound
	}
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	out := &BlockFiltersBatchResult{P: p.P, M: p.M(), ZeroedKey: p.ZeroedKey, BlockFiltersBatch: []string{}}
	if !v.hasTip || known >= v.tip.Height {
		return out, nil
	}
	last := v.tip.Height
	if last-known > uint32(pageSize) {
		last = known + uint32(pageSize)
	}
	for h := known + 1; h <= last; h++ {
		meta, err := db.ReadBlockMeta(v.snap, h)
		if err != nil {
			return nil, err
		}
		if meta == nil {
			return nil, fmt.Errorf("%w: no block at height %d below the tip", db.ErrCorrupt, h)
		}
		f, err := db.ReadBlockFilter(v.snap, meta.Hash)
		if err != nil {
			return nil, err
		}
		out.BlockFiltersBatch = append(out.BlockFiltersBatch, fmt.Sprintf("%d:%s:%x", h, meta.Hash, f))
	}
	return out, nil
}

// parseBlockHash validates a block hash parameter (64 hex characters, any
// case).
func parseBlockHash(s string) (bchain.Hash, error) {
	h, err := bchain.ParseHash(strings.ToLower(s))
	if err != nil {
		return h, userErr("Invalid block hash '%s'", truncate(s, 100))
	}
	return h, nil
}
