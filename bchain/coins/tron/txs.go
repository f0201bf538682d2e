package tron

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// MempoolTxids lists the node's pending txs (/wallet/gettransactionlistfrompending,
// as Blockbook follows the pending pool: Tron has no pending-tx
// subscription).
func (n *Node) MempoolTxids(ctx context.Context) ([]bchain.Hash, error) {
	var ans struct {
		TxID []string `json:"txId"`
	}
	if err := n.full.post(ctx, "/wallet/gettransactionlistfrompending", map[string]any{}, &ans); err != nil {
		return nil, err
	}
	out := make([]bchain.Hash, 0, len(ans.TxID))
	for _, s := range ans.TxID {
		h, err := ParseID(s)
		if err != nil {
			return nil, fmt.Errorf("tron pending txid %q: %w", s, err)
		}
		out = append(out, h)
	}
	return out, nil
}

// NodeTx is a tx as the node tells it: its body, and for a mined one its
// info (nil while pending) and whether it came from the solidity node.
type NodeTx struct {
	Tx         HTTPTx
	Info       *TxInfo
	Solidified bool
}

// LookupTx finds a tx as Blockbook does: its info on the solidity node, else
// on the full node, else the tx in the pending pool; the body from the
// side that knew the info. ErrTxNotFound when none knows it.
func (n *Node) LookupTx(ctx context.Context, id bchain.Hash) (*NodeTx, error) {
	req := map[string]any{"value": id.String()}
	for _, side := range []struct {
		api    *httpAPI
		prefix string
		solid  bool
	}{{n.solidity, "/walletsolidity/", true}, {n.full, "/wallet/", false}} {
		var info TxInfo
		if err := side.api.post(ctx, side.prefix+"gettransactioninfobyid", req, &info); err != nil {
			return nil, err
		}
		if info.ID == "" { // {}: not on this side (yet)
			continue
		}
		nt := &NodeTx{Info: &info, Solidified: side.solid}
		if err := side.api.post(ctx, side.prefix+"gettransactionbyid", req, &nt.Tx); err != nil {
			return nil, err
		}
		if nt.Tx.TxID == "" {
			return nil, fmt.Errorf("tron tx %s: an info without the tx", id)
		}
		return nt, nil
	}
	nt := &NodeTx{}
	if err := n.full.post(ctx, "/wallet/gettransactionfrompending", req, &nt.Tx); err != nil {
		return nil, err
	}
	if nt.Tx.TxID == "" {
		return nil, fmt.Errorf("tron tx %s: %w", id, bchain.ErrTxNotFound)
	}
	return nt, nil
}
