package zec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// ZIP 317's conventional fee: 5000 zatoshi per logical action, at least two
// actions. zebrad has no fee estimator and zcashd's wallet pays this fee
// too, so it is the estimate when the node gives none. As a rate it is
// spread over the smallest ordinary payment, a v5 tx with one P2PKH input
// and two P2PKH outputs (241 bytes), rounded up: 41,493.8 -> 41,494 zat/kB.
const (
	zip317MarginalFee = 5000
	zip317GraceAction = 2
	typicalPaymentLen = 20 + 1 + 148 + 1 + 2*34 + 3
	conventionalRate  = (zip317MarginalFee*zip317GraceAction*1000 + typicalPaymentLen - 1) / typicalPaymentLen
)

// adjust replaces what zcashd and zebrad answer differently from Bitcoin
// Core: chain info (consensus branch ids, no getnetworkinfo in older
// zebrad) and fee estimation (no estimatesmartfee).
func adjust(b *bchain.Backend, node *btc.Node, cfg *bchain.Config) error {
	var extra struct {
		P2PAddress string `json:"p2p_address"`
	}
	if len(cfg.Raw) > 0 {
		if err := json.Unmarshal(cfg.Raw, &extra); err != nil {
			return fmt.Errorf("%w: %v", bchain.ErrConfig, err)
		}
	}
	if extra.P2PAddress != "" && extra.P2PAddress != btc.P2POff {
		return fmt.Errorf("%w: p2p_address is not supported for Zcash (its P2P protocol and headers differ): leave it empty to download blocks over RPC", bchain.ErrConfig)
	}
	b.Chain = &Node{Node: node}
	// zcashd's estimatefee (ZEC per kB) when it has an estimate, else ZIP
	// 317's conventional fee as a rate: zebrad has no estimator, zcashd
	// answers -1 without data, and neither is asked for a relay fee.
	b.Fees = &btc.LegacyFeeEstimator{Node: node, NoRelayFee: true, Default: conventionalRate}
	// Neither node has btcd's websocket notifications: without ZMQ (zcashd
	// only) follow by polling instead of probing for them.
	if cfg.MessageQueueBinding == "" && cfg.BlockNotifications != "btcd" {
		b.Notifier, b.TxNotifier = nil, nil
	}
	return nil
}

// Node is the Bitcoin-type node with Zcash's chain info.
type Node struct {
	*btc.Node
}

// ChainInfo combines getblockchaininfo (with its consensus branch ids) and
// getnetworkinfo, or getinfo on a zebrad without getnetworkinfo.
func (z *Node) ChainInfo(ctx context.Context) (*bchain.ChainInfo, error) {
	var bc struct {
		Chain         string      `json:"chain"`
		Blocks        int         `json:"blocks"`
		Headers       int         `json:"headers"`
		BestBlockHash string      `json:"bestblockhash"`
		Difficulty    json.Number `json:"difficulty"`
		SizeOnDisk    int64       `json:"size_on_disk"`
		Consensus     *struct {
			ChainTip  string `json:"chaintip"`
			NextBlock string `json:"nextblock"`
		} `json:"consensus"`
	}
	if err := z.Call(ctx, "getblockchaininfo", nil, &bc); err != nil {
		return nil, fmt.Errorf("getblockchaininfo: %w", err)
	}
	info := &bchain.ChainInfo{
		Chain: bc.Chain, Blocks: bc.Blocks, Headers: bc.Headers, BestBlockHash: bc.BestBlockHash,
		Difficulty: string(bc.Difficulty), SizeOnDisk: bc.SizeOnDisk,
	}
	if bc.Consensus != nil {
		info.Consensus = map[string]string{"chaintip": bc.Consensus.ChainTip, "nextblock": bc.Consensus.NextBlock}
	}
	var net struct {
		Version         json.Number `json:"version"`
		Subversion      string      `json:"subversion"`
		ProtocolVersion json.Number `json:"protocolversion"`
		TimeOffset      float64     `json:"timeoffset"`
		Warnings        string      `json:"warnings"`
		Errors          string      `json:"errors"` // getinfo's
	}
	err := z.Call(ctx, "getnetworkinfo", nil, &net)
	var rpcErr *bchain.RPCError
	if errors.As(err, &rpcErr) {
		err = z.Call(ctx, "getinfo", nil, &net)
	}
	if err != nil {
		return nil, fmt.Errorf("network info: %w", err)
	}
	info.Version, info.Subversion = string(net.Version), net.Subversion
	info.ProtocolVersion, info.TimeOffset = string(net.ProtocolVersion), net.TimeOffset
	info.Warnings = net.Warnings
	if info.Warnings == "" && net.Errors != "no errors" {
		info.Warnings = net.Errors
	}
	return info, nil
}
