package api

import (
	"context"

	"github.com/openexplorer/blockbook/db"
)

// Info answers the websocket's getInfo from the index tip and the node's
// cached chain info (left empty while the node is unreachable).
func (s *core) Info(ctx context.Context) (*WsInfo, error) {
	p := s.backend.Params
	out := &WsInfo{
		Name: p.Name, Shortcut: p.Shortcut, Network: p.APINetwork, Decimals: p.Decimals,
		Version: s.cfg.Build.Version, Testnet: p.Testnet, Block0Hash: s.hashString(p.Genesis),
	}
	if err := s.infoFromIndex(out); err != nil {
		return nil, err
	}
	if ci, err := s.info.get(ctx); err == nil {
		out.Backend = WsBackendInfo{Version: ci.Version, Subversion: ci.Subversion, Consensus: ci.Consensus, ConsensusVersion: ci.ConsensusVersion}
	}
	return out, nil
}

// infoFromIndex fills getInfo's tip and, on a dev chain, block 0 (the
// snapshot is released before the node is asked).
func (s *core) infoFromIndex(out *WsInfo) error {
	snap, err := s.db.Snapshot()
	if err != nil {
		return err
	}
	defer snap.Release()
	tip, ok, err := db.ReadTip(snap)
	if err != nil {
		return err
	}
	if ok {
		out.BestHeight, out.BestHash = tip.Height, s.hashString(tip.Hash)
	}
	if s.backend.Params.Genesis.IsZero() { // a dev chain's genesis: the index's block 0
		if meta, err := db.ReadBlockMeta(snap, 0); err == nil && meta != nil {
			out.Block0Hash = s.hashString(meta.Hash)
		}
	}
	return nil
}

// BlockHash answers getBlockHash from the index. Like Blockbook, a height
// the index does not hold answers an empty hash.
func (s *core) BlockHash(_ context.Context, height int) (string, error) {
	if err := CheckBlockHeight(int64(height)); err != nil {
		return "", err
	}
	snap, err := s.db.Snapshot()
	if err != nil {
		return "", err
	}
	defer snap.Release()
	meta, err := db.ReadBlockMeta(snap, uint32(height))
	if err != nil || meta == nil {
		return "", err
	}
	return s.hashString(meta.Hash), nil
}
