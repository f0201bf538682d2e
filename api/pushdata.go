package api

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/pushdata"
	"github.com/openexplorer/blockbook/mempool"
)

// PushdataQueries answers POST /api/v2/pushdata/search: the txs that
// carry a push whose sha256 is one of hashes (db/optional/pushdata).
type PushdataQueries interface {
	PushdataSearch(ctx context.Context, hashes []string) (*PushdataSearch, error)
}

// MaxPushdataHashes bounds the hashes of one search.
const MaxPushdataHashes = 1000

// MaxPushdataMatches bounds the matches of one search: a search that
// finds more answers the first ones with Truncated set.
const MaxPushdataMatches = 10_000

// PushdataSearch is the answer of a pushdata search.
type PushdataSearch struct {
	Matches []PushdataMatch `json:"matches"`
	// Truncated: more than MaxPushdataMatches matched; Matches holds the
	// first ones (in the order of the hashes asked, confirmed before
	// pending).
	Truncated bool `json:"truncated,omitempty"`
}

// PushdataMatch is one position of a tx that carries a push of Hash.
type PushdataMatch struct {
	Hash   string `json:"hash"`
	Txid   string `json:"txid"`
	Height int64  `json:"height"` // -1 for a mempool tx
	Index  uint32 `json:"index"`  // the output or input number
	Kind   string `json:"kind"`   // "output" or "input"
}

// errPushdataOff answers a search on an index built without the pushdata
// index.
var errPushdataOff = userErr("pushdata index is not enabled: start blockbook with -pushdataindex (or \"pushdata_index\": true) on an empty datadir")

// parsePushdataHashes validates the hashes of a search: 1 to
// MaxPushdataHashes sha256s in hex, duplicates dropped.
func parsePushdataHashes(in []string) ([][32]byte, error) {
	if len(in) == 0 {
		return nil, userErr("hashes: give 1 to %d sha256 hashes in hex", MaxPushdataHashes)
	}
	if len(in) > MaxPushdataHashes {
		return nil, userErr("hashes: %d hashes, at most %d", len(in), MaxPushdataHashes)
	}
	seen := make(map[[32]byte]bool, len(in))
	out := make([][32]byte, 0, len(in))
	for i, h := range in {
		var b [32]byte
		if len(h) != 64 {
			return nil, userErr("hashes[%d]: %q is not a sha256 in hex (64 digits)", i, truncate(h, 80))
		}
		if _, err := hex.Decode(b[:], []byte(h)); err != nil {
			return nil, userErr("hashes[%d]: %q is not a sha256 in hex (64 digits)", i, h)
		}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	return out, nil
}

// PushdataSearch lists, for each hash in turn, its confirmed positions
// (oldest first: by height, tx, outputs before inputs, and number) and
// then its mempool ones (newest tx first).
func (s *UtxoService) PushdataSearch(ctx context.Context, in []string) (*PushdataSearch, error) {
	hashes, err := parsePushdataHashes(in)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if on, err := db.OptionalMarked(v.snap, pushdata.Name); err != nil {
		return nil, err
	} else if !on {
		return nil, errPushdataOff
	}
	res := &PushdataSearch{Matches: []PushdataMatch{}}
	pending := s.mempoolPushes()
	txids := map[db.TxPos]bchain.Hash{}
	for _, h := range hashes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		left := MaxPushdataMatches - len(res.Matches)
		refs, more, err := pushdata.Find(v.snap, h, left)
		if err != nil {
			return nil, fmt.Errorf("pushdata %x: %w", h, err)
		}
		// The rows' varints do not sort numerically past 127: order them
		// by block, tx, outputs before inputs, and number.
		slices.SortFunc(refs, func(a, b pushdata.Ref) int {
			return cmp.Or(cmp.Compare(a.Height, b.Height), cmp.Compare(a.Index, b.Index),
				cmpBool(a.Input, b.Input), cmp.Compare(a.N, b.N))
		})
		for _, r := range refs {
			pos := db.TxPos{Height: r.Height, Index: r.Index}
			txid, ok := txids[pos]
			if !ok {
				if txid, ok, err = db.ReadTxidAt(v.snap, r.Height, r.Index); err != nil {
					return nil, err
				} else if !ok {
					return nil, fmt.Errorf("%w: pushdata row at %d:%d names no tx", db.ErrCorrupt, r.Height, r.Index)
				}
				txids[pos] = txid
			}
			res.Matches = append(res.Matches, pushdataMatch(h, txid, int64(r.Height), r.N, r.Input))
		}
		for _, p := range pending[h] {
			if more || len(res.Matches) == MaxPushdataMatches {
				more = true
				break
			}
			res.Matches = append(res.Matches, pushdataMatch(h, p.txid, -1, p.N, p.Input))
		}
		if more {
			res.Truncated = true
			break
		}
	}
	return res, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func pushdataMatch(h [32]byte, txid bchain.Hash, height int64, n uint32, input bool) PushdataMatch {
	kind := "output"
	if input {
		kind = "input"
	}
	return PushdataMatch{Hash: hex.EncodeToString(h[:]), Txid: txid.String(), Height: height, Index: n, Kind: kind}
}

// pendingPush is a push of a mempool tx.
type pendingPush struct {
	pushdata.Push
	txid bchain.Hash
}

// mempoolPushes lists the pushes of every mempool tx, by hash, newest tx
// first. The mempool keeps no pushdata of its own (it would cost every
// operator, for an index few keep), so searches compute them, once per
// tx (pendingPushCache).
func (s *UtxoService) mempoolPushes() map[[32]byte][]pendingPush {
	out := map[[32]byte][]pendingPush{}
	if s.cfg.Mempool == nil {
		return out
	}
	txs := s.cfg.Mempool.Txs()
	for i, pushes := range s.pushes.of(txs) {
		for _, p := range pushes {
			out[p.Hash] = append(out[p.Hash], pendingPush{Push: p, txid: txs[i].Txid})
		}
	}
	return out
}

// pendingPushCache keeps the pushes of the mempool txs the last search
// saw: a *mempool.Tx is never modified once published (a tx resolved
// later is a new *Tx), so its pushes are computed once (about 3 µs a tx),
// and a search costs a map lookup per pending tx. Txs that left the
// mempool leave the cache at the next search.
type pendingPushCache struct {
	mu   sync.Mutex
	byTx map[*mempool.Tx][]pushdata.Push
}

// of returns the pushes of each tx, one entry per position.
func (c *pendingPushCache) of(txs []*mempool.Tx) [][]pushdata.Push {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[*mempool.Tx][]pushdata.Push, len(txs))
	out := make([][]pushdata.Push, len(txs))
	for i, tx := range txs {
		pushes, ok := c.byTx[tx]
		if !ok {
			pushes = uniquePushes(pushdata.TxPushes(tx.Tx, prevScripts(tx)))
		}
		next[tx], out[i] = pushes, pushes
	}
	c.byTx = next
	return out
}

// uniquePushes drops repeated pushes at one position, as the index's rows
// do.
func uniquePushes(ps []pushdata.Push) []pushdata.Push {
	seen := make(map[pushdata.Push]bool, len(ps))
	out := ps[:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// prevScripts gives the scripts a mempool tx's inputs spend: their
// descriptors, nil while a parent is unknown.
func prevScripts(tx *mempool.Tx) func(j int) []byte {
	return func(j int) []byte {
		if j < len(tx.Prevouts) && tx.Prevouts[j].Known {
			return tx.Prevouts[j].Desc
		}
		return nil
	}
}
