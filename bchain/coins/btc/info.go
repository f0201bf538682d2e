package btc

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// ChainInfo combines getblockchaininfo with Core's getnetworkinfo or btcd's
// getinfo into the status page's backend section.
func (n *Node) ChainInfo(ctx context.Context) (*bchain.ChainInfo, error) {
	d, err := n.Dialect(ctx)
	if err != nil {
		return nil, err
	}
	var bc struct {
		Chain         string          `json:"chain"`
		Blocks        int             `json:"blocks"`
		Headers       int             `json:"headers"`
		BestBlockHash string          `json:"bestblockhash"`
		Difficulty    json.Number     `json:"difficulty"`
		SizeOnDisk    int64           `json:"size_on_disk"`
		Warnings      json.RawMessage `json:"warnings"`
	}
	if err := n.rpc.call(ctx, "getblockchaininfo", nil, &bc); err != nil {
		return nil, err
	}
	info := &bchain.ChainInfo{
		Chain: bc.Chain, Blocks: bc.Blocks, Headers: bc.Headers, BestBlockHash: bc.BestBlockHash,
		Difficulty: string(bc.Difficulty), SizeOnDisk: bc.SizeOnDisk, Warnings: warningsText(bc.Warnings),
	}
	var net struct {
		Version         json.Number     `json:"version"`
		Subversion      string          `json:"subversion"`
		ProtocolVersion json.Number     `json:"protocolversion"`
		TimeOffset      float64         `json:"timeoffset"`
		Warnings        json.RawMessage `json:"warnings"`
		Errors          string          `json:"errors"` // btcd's getinfo
	}
	method := "getnetworkinfo"
	if d == dialectBtcd {
		method = "getinfo"
	}
	if err := n.rpc.call(ctx, method, nil, &net); err != nil {
		return nil, err
	}
	info.Version = string(net.Version)
	info.Subversion = net.Subversion
	info.ProtocolVersion = string(net.ProtocolVersion)
	info.TimeOffset = net.TimeOffset
	if w := warningsText(net.Warnings); w != "" && info.Warnings == "" {
		info.Warnings = w
	}
	if info.Warnings == "" {
		info.Warnings = net.Errors
	}
	if d == dialectBtcd && info.Subversion == "" {
		info.Subversion = "/btcd:" + info.Version + "/"
	}
	return info, nil
}

// warningsText accepts both the string (Core < 28, btcd) and the array
// (Core >= 28) form of "warnings".
func warningsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, "; ")
	}
	return ""
}
