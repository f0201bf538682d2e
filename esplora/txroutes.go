package esplora

import (
	"context"
	"encoding/hex"
	"strconv"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// The tx routes: /tx/:txid[/status|hex|raw|merkle-proof|merkleblock-proof|
// outspends|outspend/:vout].

func parseHash(s string) (bchain.Hash, error) {
	h, err := bchain.ParseHash(s)
	if err != nil {
		return h, badRequest("Invalid hex string")
	}
	return h, nil
}

func parseIndex(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, badRequest("Invalid number")
	}
	return uint32(v), nil
}

func (s *Server) routeTx(ctx context.Context, p []string, n int) (*reply, error) {
	if n < 2 || n > 4 || n == 4 && p[2] != "outspend" {
		return nil, errNoRoute
	}
	switch {
	case n == 2:
	case n == 3 && (p[2] == "status" || p[2] == "hex" || p[2] == "raw" || p[2] == "merkle-proof" ||
		p[2] == "merkleblock-proof" || p[2] == "outspends"):
	case n == 4:
	default:
		return nil, errNoRoute
	}
	txid, err := parseHash(p[1])
	if err != nil {
		return nil, err
	}
	if n == 4 {
		vout, err := parseIndex(p[3])
		if err != nil {
			return nil, err
		}
		return s.outspend(ctx, txid, vout)
	}
	tx, err := s.q.EsploraTx(ctx, txid)
	if err != nil {
		return nil, err
	}
	if n == 3 && p[2] == "status" { // electrs: an unknown tx is unconfirmed
		st := txStatus{}
		if tx != nil {
			st = statusOf(tx.Block)
		}
		return jsonReply(st)
	}
	if n == 3 && (p[2] == "merkle-proof" || p[2] == "merkleblock-proof") {
		if tx == nil || tx.Block == nil {
			return nil, notFound("Transaction not found or is unconfirmed")
		}
		return s.merkle(ctx, tx, p[2] == "merkleblock-proof")
	}
	if tx == nil {
		return nil, notFound("Transaction not found")
	}
	switch {
	case n == 2:
		return jsonReply(s.txValueOf(tx))
	case p[2] == "hex":
		return textReply(hex.EncodeToString(tx.Tx.Raw))
	case p[2] == "raw":
		return &reply{"application/octet-stream", tx.Tx.Raw}, nil
	}
	spends, err := s.q.EsploraSpends(ctx, txid, len(tx.Tx.Vout))
	if err != nil {
		return nil, err
	}
	out := make([]spendValue, len(spends))
	for i, sp := range spends {
		out[i] = spendOf(sp)
	}
	return jsonReply(out)
}

// outspend answers one output's spend; like electrs it does not check that
// the tx or the output exists (an unknown one is unspent).
func (s *Server) outspend(ctx context.Context, txid bchain.Hash, vout uint32) (*reply, error) {
	if vout >= 1<<20 { // more outputs than a block can hold: nothing spends it
		return jsonReply(spendValue{})
	}
	spends, err := s.q.EsploraSpends(ctx, txid, int(vout)+1)
	if err != nil {
		return nil, err
	}
	return jsonReply(spendOf(spends[vout]))
}

// merkle answers a confirmed tx's inclusion proof: Electrum's
// get_merkle shape, or bitcoind's serialized merkleblock.
func (s *Server) merkle(ctx context.Context, tx *api.EsploraTx, merkleBlock bool) (*reply, error) {
	blk, err := s.q.EsploraBlock(ctx, tx.Block.Height)
	if err != nil {
		return nil, err
	}
	pos := -1
	if blk != nil {
		for i, id := range blk.Txids {
			if id == tx.Tx.Txid {
				pos = i
				break
			}
		}
	}
	if pos < 0 { // a reorg between the two reads
		return nil, notFound("Transaction not found or is unconfirmed")
	}
	if merkleBlock {
		return textReply(hex.EncodeToString(merkleBlockProof(blk, pos)))
	}
	branch := merkleBranch(blk.Txids, pos)
	proof := struct {
		BlockHeight uint32   `json:"block_height"`
		Merkle      []string `json:"merkle"`
		Pos         int      `json:"pos"`
	}{blk.Height, make([]string, len(branch)), pos}
	for i, h := range branch {
		proof.Merkle[i] = h.String()
	}
	return jsonReply(proof)
}
