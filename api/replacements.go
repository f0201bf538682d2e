package api

import (
	"context"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mempool"
)

// MempoolReplacements is the mempool's RBF history (mempool.Replacements).
type MempoolReplacements interface {
	Tree(txid bchain.Hash) *mempool.RbfTree
	Replaces(txid bchain.Hash) []bchain.Hash
	ReplacedBy(txid bchain.Hash) (bchain.Hash, bool)
	Latest(fullOnly bool, limit int) []*mempool.RbfTree
	Version() uint64
}

// ReplacementQueries answers mempool.space's RBF routes from the
// replacements this process's mempool saw.
type ReplacementQueries interface {
	// TxRbf is tx/:txid/rbf.
	TxRbf(ctx context.Context, txid string) (*RbfHistory, error)
	// Replacements is replacements (fullOnly: fullrbf/replacements): the
	// latest RbfTreesPerPage trees.
	Replacements(ctx context.Context, fullOnly bool) []*RbfTree
	// RbfSummary is the websocket's rbfLatestSummary.
	RbfSummary(ctx context.Context) []ReplacementInfo
	// ReplacedBy is the tx that replaced txid, if any.
	ReplacedBy(txid bchain.Hash) (string, bool)
	// RbfVersion changes whenever the history does.
	RbfVersion() uint64
}

// RbfTreesPerPage and rbfSummaryLen are mempool.space's page sizes.
const (
	RbfTreesPerPage = 25
	rbfSummaryLen   = 6
)

// RbfTx is mempool.space's RbfTransaction.
type RbfTx struct {
	Txid    string  `json:"txid"`
	Fee     uint64  `json:"fee"`
	VSize   float64 `json:"vsize"`
	Value   uint64  `json:"value"`
	Rate    float64 `json:"rate"`
	Time    int64   `json:"time,omitempty"`
	Rbf     bool    `json:"rbf"`
	FullRbf *bool   `json:"fullRbf,omitempty"`
	Mined   *bool   `json:"mined,omitempty"`
}

// RbfTree is mempool.space's RbfTree.
type RbfTree struct {
	Tx       RbfTx      `json:"tx"`
	Time     int64      `json:"time"`
	Interval *int64     `json:"interval,omitempty"`
	Mined    *bool      `json:"mined,omitempty"`
	FullRbf  bool       `json:"fullRbf"`
	Replaces []*RbfTree `json:"replaces"`
}

// RbfHistory is tx/:txid/rbf: the tree holding the tx and the txs it
// replaced directly, each null when there is none.
type RbfHistory struct {
	Replacements *RbfTree `json:"replacements"`
	Replaces     []string `json:"replaces"`
}

// ReplacementInfo is mempool.space's ReplacementInfo (rbfLatestSummary).
type ReplacementInfo struct {
	Mined    bool    `json:"mined"`
	FullRbf  bool    `json:"fullRbf"`
	Txid     string  `json:"txid"`
	OldFee   uint64  `json:"oldFee"`
	OldVsize float64 `json:"oldVsize"`
	NewFee   uint64  `json:"newFee"`
	NewVsize float64 `json:"newVsize"`
}

type replacementQueries struct{ r MempoolReplacements }

var _ ReplacementQueries = replacementQueries{}

func wireTree(t *mempool.RbfTree, root bool) *RbfTree {
	if t == nil {
		return nil
	}
	rate := 0.0
	if t.Tx.VSize > 0 {
		rate = float64(t.Tx.Fee) / t.Tx.VSize
	}
	out := &RbfTree{Tx: RbfTx{Txid: t.Tx.Txid.String(), Fee: t.Tx.Fee, VSize: t.Tx.VSize, Value: t.Tx.Value, Rate: rate,
		Time: t.Tx.Time, Rbf: t.Tx.Rbf}, Time: t.Time, FullRbf: t.FullRbf, Replaces: []*RbfTree{}}
	if len(t.Replaces) > 0 { // rbf-cache sets fullRbf on replacing txs only
		out.Tx.FullRbf = &t.Tx.FullRbf
	}
	if t.Tx.Mined {
		out.Tx.Mined = &t.Tx.Mined
	}
	if t.Mined {
		out.Mined = &t.Mined
	}
	if !root {
		iv := t.Interval
		out.Interval = &iv
	}
	for _, c := range t.Replaces {
		out.Replaces = append(out.Replaces, wireTree(c, false))
	}
	return out
}

func (q replacementQueries) TxRbf(_ context.Context, txid string) (*RbfHistory, error) {
	h, err := bchain.ParseHash(txid)
	if err != nil || len(txid) != 64 {
		return nil, userErr("Invalid transaction ID")
	}
	out := &RbfHistory{}
	if t := q.r.Tree(h); t != nil {
		out.Replacements = wireTree(t, true)
	}
	for _, id := range q.r.Replaces(h) {
		out.Replaces = append(out.Replaces, id.String())
	}
	return out, nil
}

func (q replacementQueries) Replacements(_ context.Context, fullOnly bool) []*RbfTree {
	out := []*RbfTree{}
	for _, t := range q.r.Latest(fullOnly, RbfTreesPerPage) {
		out = append(out, wireTree(t, true))
	}
	return out
}

func (q replacementQueries) RbfSummary(_ context.Context) []ReplacementInfo {
	out := []ReplacementInfo{}
	for _, t := range q.r.Latest(false, rbfSummaryLen) {
		info := ReplacementInfo{Txid: t.Tx.Txid.String(), Mined: t.Tx.Mined, FullRbf: t.Tx.FullRbf, NewFee: t.Tx.Fee, NewVsize: t.Tx.VSize}
		for _, c := range t.Replaces {
			info.OldFee += c.Tx.Fee
			info.OldVsize += c.Tx.VSize
		}
		out = append(out, info)
	}
	return out
}

func (q replacementQueries) ReplacedBy(txid bchain.Hash) (string, bool) {
	h, ok := q.r.ReplacedBy(txid)
	if !ok {
		return "", false
	}
	return h.String(), true
}

func (q replacementQueries) RbfVersion() uint64 { return q.r.Version() }
