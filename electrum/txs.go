package electrum

import (
	"context"
	"encoding/hex"
	"encoding/json"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

func parseTxid(p params, i int) (bchain.Hash, error) {
	s, err := p.str(i, "tx_hash")
	if err != nil {
		return bchain.Hash{}, err
	}
	h, err := bchain.ParseHash(s)
	if err != nil {
		return h, badRequest("%s is not a valid transaction hash", truncate(s, 80))
	}
	return h, nil
}

func txGet(ctx context.Context, ss *session, p params) (any, error) {
	txid, err := parseTxid(p, 0)
	if err != nil {
		return nil, err
	}
	verbose, err := p.boolean(1, "verbose")
	if err != nil {
		return nil, err
	}
	caps := ss.s.svc.Capabilities()
	if verbose {
		if caps.TxSpecific == nil {
			return nil, badRequest("verbose transactions are not supported")
		}
		raw, err := caps.TxSpecific.TxSpecific(ctx, txid.String())
		if err != nil {
			return nil, err
		}
		return raw, nil
	}
	if caps.RawTxs == nil {
		return nil, badRequest("raw transactions are not supported")
	}
	return caps.RawTxs.RawTx(ctx, txid.String())
}

// blockMerkle is the merkle branch of the tx at pos in the block at
// height, and the block's txids.
func (s *Server) blockMerkle(ctx context.Context, height int, find *bchain.Hash, pos int) (bchain.Hash, int, []string, error) {
	txids, err := s.scripts.BlockTxids(ctx, uint32(height))
	if err != nil {
		return bchain.Hash{}, 0, nil, err
	}
	if len(txids) == 0 {
		return bchain.Hash{}, 0, nil, badRequest("no block at height %d", height)
	}
	if find != nil {
		pos = -1
		for i, t := range txids {
			if t == *find {
				pos = i
				break
			}
		}
		if pos < 0 {
			return bchain.Hash{}, 0, nil, badRequest("tx %s not in block at height %d", find, height)
		}
	} else if pos >= len(txids) {
		return bchain.Hash{}, 0, nil, badRequest("no tx at position %d in block at height %d", pos, height)
	}
	leaves := make([][32]byte, len(txids))
	for i, t := range txids {
		leaves[i] = internal(t)
	}
	branch, _ := merkleBranch(leaves, pos)
	return txids[pos], pos, shownAll(branch), nil
}

type merkleAnswer struct {
	BlockHeight int      `json:"block_height"`
	Merkle      []string `json:"merkle"`
	Pos         int      `json:"pos"`
}

func txGetMerkle(ctx context.Context, ss *session, p params) (any, error) {
	txid, err := parseTxid(p, 0)
	if err != nil {
		return nil, err
	}
	height, err := p.nonNegInt(1, "height", 0, true)
	if err != nil {
		return nil, err
	}
	_, pos, branch, err := ss.s.blockMerkle(ctx, height, &txid, 0)
	if err != nil {
		return nil, err
	}
	return merkleAnswer{BlockHeight: height, Merkle: branch, Pos: pos}, nil
}

type idFromPosAnswer struct {
	TxHash string   `json:"tx_hash"`
	Merkle []string `json:"merkle"`
}

func txIDFromPos(ctx context.Context, ss *session, p params) (any, error) {
	height, err := p.nonNegInt(0, "height", 0, true)
	if err != nil {
		return nil, err
	}
	pos, err := p.nonNegInt(1, "tx_pos", 0, true)
	if err != nil {
		return nil, err
	}
	withMerkle, err := p.boolean(2, "merkle")
	if err != nil {
		return nil, err
	}
	txid, _, branch, err := ss.s.blockMerkle(ctx, height, nil, pos)
	if err != nil {
		return nil, err
	}
	if !withMerkle {
		return txid.String(), nil
	}
	return idFromPosAnswer{TxHash: txid.String(), Merkle: branch}, nil
}

// txBroadcast sends a tx to the node; a refusal is a bad request with the
// node's reason, as Electrum servers word it.
func txBroadcast(ctx context.Context, ss *session, p params) (any, error) {
	raw, err := p.str(0, "raw_tx")
	if err != nil {
		return nil, err
	}
	if _, err := hex.DecodeString(raw); err != nil || raw == "" {
		return nil, badRequest("the transaction was rejected by network rules.\n\nraw_tx is not hex")
	}
	res, err := ss.s.svc.SendTx(ctx, raw)
	if err != nil {
		// Only the node's verdict on the tx is the client's to read; a
		// node that does not answer is code 2 without its internals
		// (wireError), never a "rejection" quoting the node's URL.
		if ue, ok := api.AsUserError(err); ok {
			return nil, badRequest("the transaction was rejected by network rules.\n\n%s", ue.Msg)
		}
		return nil, err
	}
	return res.Result, nil
}

// packageAnswer is broadcast_package's answer without verbose.
type packageAnswer struct {
	Success bool            `json:"success"`
	Errors  []PackageReject `json:"errors,omitempty"`
}

// txBroadcastPackage relays a package where the node can (Bitcoin Core's
// submitpackage); otherwise it answers the daemon error.
func txBroadcastPackage(ctx context.Context, ss *session, p params) (any, error) {
	if !p.has(0) {
		return nil, invalidParams("raw_txs is required")
	}
	var raws []string
	if err := json.Unmarshal(p[0], &raws); err != nil || len(raws) == 0 {
		return nil, invalidParams("raw_txs must be a non-empty array of hex strings")
	}
	for i, r := range raws {
		if _, err := hex.DecodeString(r); err != nil || r == "" {
			return nil, invalidParams("raw_txs[%d] is not hex", i)
		}
	}
	verbose, err := p.boolean(1, "verbose")
	if err != nil {
		return nil, err
	}
	pb, ok := ss.s.svc.(PackageBroadcaster)
	if !ok {
		return nil, newErr(codeDaemonError, "the node does not support package relay (submitpackage)")
	}
	v, rejected, err := pb.BroadcastPackage(ctx, raws)
	if err != nil {
		if ue, ok := api.AsUserError(err); ok {
			return nil, badRequest("the tx package was rejected by network rules.\n\n%s", ue.Msg)
		}
		return nil, err
	}
	if verbose {
		return v, nil
	}
	return packageAnswer{Success: len(rejected) == 0, Errors: rejected}, nil
}
