package mesh

import (
	"cmp"
	"context"
)

// Operation types and the one status of a UTXO chain's operations (a
// Bitcoin block holds only valid txs, so every operation succeeded).
const (
	opInput    = "INPUT"    // an input spending a coin: negative amount
	opOutput   = "OUTPUT"   // an output creating a coin: positive amount
	opCoinbase = "COINBASE" // the coinbase's input: no account, no amount
	// opOverwritten is the loss of a coin an earlier duplicate coinbase
	// created, which the later one with the same txid overwrote (Bitcoin
	// mainnet blocks 91842 and 91880): negative amount.
	opOverwritten = "OVERWRITTEN"
	opSuccess     = "SUCCESS"
)

type networkListResponse struct {
	NetworkIdentifiers []NetworkIdentifier `json:"network_identifiers"`
}

func (s *Server) networkList(_ context.Context, body []byte) (any, error) {
	var req struct {
		Metadata map[string]any `json:"metadata,omitempty"`
	}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	return &networkListResponse{NetworkIdentifiers: []NetworkIdentifier{s.network()}}, nil
}

type version struct {
	RosettaVersion    string `json:"rosetta_version"`
	NodeVersion       string `json:"node_version"`
	MiddlewareVersion string `json:"middleware_version,omitempty"`
}

type operationStatus struct {
	Status     string `json:"status"`
	Successful bool   `json:"successful"`
}

type allow struct {
	OperationStatuses       []operationStatus `json:"operation_statuses"`
	OperationTypes          []string          `json:"operation_types"`
	Errors                  []*Error          `json:"errors"`
	HistoricalBalanceLookup bool              `json:"historical_balance_lookup"`
	CallMethods             []string          `json:"call_methods"`
	BalanceExemptions       []struct{}        `json:"balance_exemptions"`
	MempoolCoins            bool              `json:"mempool_coins"`
	BlockHashCase           string            `json:"block_hash_case"`
	TransactionHashCase     string            `json:"transaction_hash_case"`
}

type networkOptionsResponse struct {
	Version version `json:"version"`
	Allow   allow   `json:"allow"`
}

func (s *Server) networkOptions(ctx context.Context, body []byte) (any, error) {
	var req networkRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	nodeVersion := s.opts.NodeVersion
	if nodeVersion == "" {
		nodeVersion = "unknown"
		// The node's own version, from the status's cached chain info.
		if st, err := s.svc.Status(ctx); err == nil && st.Backend != nil {
			nodeVersion = cmp.Or(st.Backend.Subversion, st.Backend.Version, nodeVersion)
		}
	}
	return &networkOptionsResponse{
		Version: version{RosettaVersion: Version, NodeVersion: nodeVersion, MiddlewareVersion: s.opts.MiddlewareVersion},
		Allow: allow{
			OperationStatuses:       []operationStatus{{Status: opSuccess, Successful: true}},
			OperationTypes:          []string{opInput, opOutput, opCoinbase, opOverwritten},
			Errors:                  allErrors,
			HistoricalBalanceLookup: true,
			CallMethods:             callMethods,
			BalanceExemptions:       []struct{}{},
			MempoolCoins:            true,
			BlockHashCase:           "lower_case",
			TransactionHashCase:     "lower_case",
		},
	}, nil
}

type syncStatus struct {
	CurrentIndex *int64 `json:"current_index,omitempty"`
	TargetIndex  *int64 `json:"target_index,omitempty"`
	Stage        string `json:"stage,omitempty"`
	Synced       *bool  `json:"synced,omitempty"`
}

type networkStatusResponse struct {
	CurrentBlockIdentifier BlockIdentifier `json:"current_block_identifier"`
	CurrentBlockTimestamp  int64           `json:"current_block_timestamp"`
	GenesisBlockIdentifier BlockIdentifier `json:"genesis_block_identifier"`
	OldestBlockIdentifier  BlockIdentifier `json:"oldest_block_identifier"`
	SyncStatus             *syncStatus     `json:"sync_status,omitempty"`
}

func (s *Server) networkStatus(ctx context.Context, body []byte) (any, error) {
	var req networkRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	tip, err := s.tip(ctx)
	if err != nil {
		return nil, err
	}
	refs, err := s.idx.EsploraBlockRefs(ctx, []uint32{0, uint32(tip.Index)})
	if err != nil {
		return nil, err
	}
	genesis, cur := refs[0], refs[uint32(tip.Index)]
	if cur.Hash.IsZero() || s.blockID(cur.Height, cur.Hash) != tip {
		return nil, fail(errUnavailable, "the tip moved while read")
	}
	out := &networkStatusResponse{
		CurrentBlockIdentifier: tip,
		CurrentBlockTimestamp:  cur.Time * 1000,
		GenesisBlockIdentifier: s.blockID(0, genesis.Hash),
		// The index holds every block from the genesis.
		OldestBlockIdentifier: s.blockID(0, genesis.Hash),
	}
	if st, err := s.svc.Status(ctx); err == nil && st.Blockbook != nil {
		synced := st.Blockbook.InSync && !st.Blockbook.InitialSync
		cur := int64(st.Blockbook.BestHeight)
		out.SyncStatus = &syncStatus{CurrentIndex: &cur, Synced: &synced}
		if st.Backend != nil && st.Backend.Blocks > 0 {
			target := int64(st.Backend.Blocks)
			out.SyncStatus.TargetIndex = &target
		}
	}
	return out, nil
}
