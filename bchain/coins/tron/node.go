package tron

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

// Node follows one java-tron node as Blockbook does:
//
//   - the tip (latest, not yet solidified) from the JSON-RPC
//     eth_getBlockByNumber("latest"), and each block's header, size and
//     tx order from eth_getBlockByHash: the EVM view has them in one call;
//   - the solidified height from /walletsolidity/getblock (no id: the
//     latest solidified block), refreshed with every tip read;
//   - a block's txs from /wallet/getblockbyid (their typed contracts,
//     which the EVM view reduces to from/to/value) and their outcomes
//     from /wallet/gettransactioninfobyblocknum (receipts, fees, logs),
//     both from the /walletsolidity/ twins once the block is solidified:
//     those answers no longer change, and the solidity node serves them;
//   - a solidified height's hash from /walletsolidity/getblock by number,
//     other heights' from eth_getBlockByNumber.
type Node struct {
	rpc      *jsonRPC
	full     *httpAPI
	solidity *httpAPI
	// solid is the last solidified height seen (+1; 0: none yet).
	solid atomic.Uint64
	// netVersion is the network's net_version ("": any); checked once.
	netVersion string
	netOK      atomic.Bool
	// internal: index internal transactions (processInternalTransactions,
	// off by default as in Blockbook's Tron configs).
	internal bool
}

// Config keys of Blockbook's Tron configuration: the HTTP APIs' URLs;
// when absent they are rpc_url's host on java-tron's default ports.
type nodeConfig struct {
	FullNodeURL string `json:"tron_fullnode_http_url_template"`
	SolidityURL string `json:"tron_solidity_http_url_template"`
}

// java-tron's default HTTP ports (Blockbook's defaults too).
const (
	defaultFullNodePort = "8090"
	defaultSolidityPort = "8091"
)

// NewNode builds a client of the node cfg names.
func NewNode(cfg *bchain.Config) (*Node, error) {
	var nc nodeConfig
	if len(cfg.Raw) > 0 {
		if err := json.Unmarshal(cfg.Raw, &nc); err != nil {
			return nil, fmt.Errorf("%w: %v", bchain.ErrConfig, err)
		}
	}
	full, err := httpURL(nc.FullNodeURL, cfg.RPCURL, defaultFullNodePort)
	if err != nil {
		return nil, err
	}
	sol, err := httpURL(nc.SolidityURL, cfg.RPCURL, defaultSolidityPort)
	if err != nil {
		return nil, err
	}
	c := newHTTPClient(cfg.Timeout())
	return &Node{
		internal: cfg.ProcessInternalTransactions,
		rpc:      &jsonRPC{url: cfg.RPCURL, client: c},
		full:     &httpAPI{base: full, client: c},
		solidity: &httpAPI{base: sol, client: c},
	}, nil
}

// httpURL is explicit when given, else rpc_url's scheme and host on port.
func httpURL(explicit, rpcURL, port string) (string, error) {
	if s := strings.TrimRight(strings.TrimSpace(explicit), "/"); s != "" {
		return s, nil
	}
	u, err := url.Parse(rpcURL)
	if err != nil || u.Scheme == "" || u.Hostname() == "" {
		return "", fmt.Errorf("%w: rpc_url %q is not a URL", bchain.ErrConfig, rpcURL)
	}
	return u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port), nil
}

// rpcHeader is the part of a JSON-RPC block read here.
type rpcHeader struct {
	Number       hexutil.Uint64 `json:"number"`
	Hash         string         `json:"hash"`
	ParentHash   string         `json:"parentHash"`
	Timestamp    hexutil.Uint64 `json:"timestamp"`
	Size         hexutil.Uint64 `json:"size"`
	Transactions []string       `json:"transactions"`
}

func (n *Node) header(ctx context.Context, method string, arg any) (*rpcHeader, error) {
	var h *rpcHeader
	if err := n.rpc.call(ctx, &h, method, arg, false); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, bchain.ErrBlockNotFound
	}
	return h, nil
}

// BestBlock is the latest block (Blockbook indexes up to it, not only to
// the solidified height); it also refreshes the solidified height.
func (n *Node) BestBlock(ctx context.Context) (uint32, bchain.Hash, error) {
	if err := n.checkNetwork(ctx); err != nil {
		return 0, bchain.Hash{}, err
	}
	h, err := n.header(ctx, "eth_getBlockByNumber", "latest")
	if err != nil {
		return 0, bchain.Hash{}, err
	}
	hash, err := ParseID(h.Hash)
	if err != nil {
		return 0, bchain.Hash{}, err
	}
	if _, err := n.RefreshSolidified(ctx); err != nil {
		return 0, bchain.Hash{}, err
	}
	return uint32(h.Number), hash, nil
}

// checkNetwork refuses a node on another network (net_version), as
// Blockbook does at start; before the first block, since the index must
// not take another network's blocks.
func (n *Node) checkNetwork(ctx context.Context) error {
	if n.netVersion == "" || n.netOK.Load() {
		return nil
	}
	var v string
	if err := n.rpc.call(ctx, &v, "net_version"); err != nil {
		return err
	}
	if v != n.netVersion {
		return fmt.Errorf("%w: the node is on network %q (net_version), the coin's is %q", bchain.ErrConfig, v, n.netVersion)
	}
	n.netOK.Store(true)
	return nil
}

// RefreshSolidified reads the latest solidified height.
func (n *Node) RefreshSolidified(ctx context.Context) (uint32, error) {
	var b HTTPBlock
	if err := n.solidity.post(ctx, "/walletsolidity/getblock", map[string]any{"detail": false}, &b); err != nil {
		return 0, err
	}
	if b.BlockID == "" {
		return 0, fmt.Errorf("tron /walletsolidity/getblock: no block")
	}
	h := uint64(b.BlockHeader.RawData.Number)
	n.solid.Store(h + 1)
	return uint32(h), nil
}

// Solidified tells whether height is at or below the last solidified
// height seen.
func (n *Node) Solidified(height uint32) bool {
	s := n.solid.Load()
	return s > 0 && uint64(height) < s
}

// BlockHash returns the hash of the block at height.
func (n *Node) BlockHash(ctx context.Context, height uint32) (bchain.Hash, error) {
	if n.Solidified(height) {
		var b HTTPBlock
		err := n.solidity.post(ctx, "/walletsolidity/getblock",
			map[string]any{"id_or_num": strconv.FormatUint(uint64(height), 10), "detail": false}, &b)
		if err == nil && b.BlockID != "" && b.BlockHeader.RawData.Number == int64(height) {
			return ParseID(b.BlockID)
		}
		// As Blockbook: a failed solidity lookup falls back to JSON-RPC.
	}
	h, err := n.header(ctx, "eth_getBlockByNumber", hexutil.EncodeUint64(uint64(height)))
	if err != nil {
		return bchain.Hash{}, err
	}
	return ParseID(h.Hash)
}

// BlockHeight returns the height of a block the node knows by hash.
func (n *Node) BlockHeight(ctx context.Context, hash bchain.Hash) (uint32, error) {
	h, err := n.header(ctx, "eth_getBlockByHash", "0x"+hash.String())
	if err != nil {
		return 0, err
	}
	return uint32(h.Number), nil
}

// api picks the solidity node's HTTP API for solidified blocks.
func (n *Node) api(height uint32) (*httpAPI, string) {
	if n.Solidified(height) {
		return n.solidity, "/walletsolidity/"
	}
	return n.full, "/wallet/"
}

// Block fetches a block with its txs' contracts and outcomes. Its height
// is the node's (the infos are asked by it), not the caller's guess.
func (n *Node) Block(ctx context.Context, hash bchain.Hash, _ uint32) (*bchain.Block, error) {
	h, err := n.header(ctx, "eth_getBlockByHash", "0x"+hash.String())
	if err != nil {
		return nil, err
	}
	height := uint32(h.Number)
	api, prefix := n.api(height)
	var hb HTTPBlock
	var infos []TxInfo
	var wg sync.WaitGroup
	var errBlock, errInfos error
	wg.Go(func() {
		errBlock = api.post(ctx, prefix+"getblockbyid", map[string]any{"value": hash.String()}, &hb)
	})
	if len(h.Transactions) > 0 {
		wg.Go(func() {
			errInfos = api.post(ctx, prefix+"gettransactioninfobyblocknum", map[string]any{"num": height}, &infos)
		})
	}
	wg.Wait()
	if errBlock != nil {
		return nil, errBlock
	}
	if errInfos != nil {
		return nil, errInfos
	}
	if hb.BlockID == "" {
		return nil, bchain.ErrBlockNotFound // reorged away between the calls
	}
	return buildBlock(h, &hb, infos, n.internal)
}

// buildBlock joins the three answers of one block into the index's
// block. The infos are asked by number, so a reorg between the calls
// could hand those of another block at the same height: every tx must
// find its own info, else the block is refused (the sync worker asks
// again).
func buildBlock(h *rpcHeader, hb *HTTPBlock, infos []TxInfo, internal bool) (*bchain.Block, error) {
	hash, err := ParseID(h.Hash)
	if err != nil {
		return nil, err
	}
	if id, err := ParseID(hb.BlockID); err != nil || id != hash {
		return nil, fmt.Errorf("tron block %s: HTTP answered block %q", hash, hb.BlockID)
	}
	prev, err := ParseID(h.ParentHash)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*TxInfo, len(infos))
	for i := range infos {
		byID[strings.ToLower(infos[i].ID)] = &infos[i]
	}
	if len(hb.Transactions) != len(h.Transactions) {
		return nil, fmt.Errorf("tron block %s: %d txs over HTTP, %d over JSON-RPC", hash, len(hb.Transactions), len(h.Transactions))
	}
	blk := &bchain.Block{
		BlockHeader: bchain.BlockHeader{Hash: hash, Prev: prev, Height: uint32(h.Number), Time: int64(h.Timestamp), Size: int(h.Size)},
		Eth:         &bchain.EthBlock{Txs: make([]bchain.EthTx, 0, len(hb.Transactions)), Traced: internal},
	}
	if m, err := ethAddress(hb.BlockHeader.RawData.WitnessAddress); err == nil {
		blk.Eth.Miner = m
	}
	var nextLog uint
	for i := range hb.Transactions {
		tx := &hb.Transactions[i]
		info := byID[strings.ToLower(tx.TxID)]
		if info == nil || info.BlockNumber != int64(blk.Height) {
			return nil, fmt.Errorf("tron block %s: no info for tx %s at height %d", hash, tx.TxID, blk.Height)
		}
		et, err := ethTx(tx, info, i, &nextLog, internal)
		if err != nil {
			return nil, fmt.Errorf("tron block %s: %w", hash, err)
		}
		et.BlockHash, et.BlockHeight = hash, blk.Height
		blk.Eth.Txs = append(blk.Eth.Txs, et)
	}
	return blk, nil
}

// ChainInfo describes the node for status pages.
func (n *Node) ChainInfo(ctx context.Context) (*bchain.ChainInfo, error) {
	h, err := n.header(ctx, "eth_getBlockByNumber", "latest")
	if err != nil {
		return nil, err
	}
	var id string
	if err := n.rpc.call(ctx, &id, "eth_chainId"); err != nil {
		return nil, err
	}
	hash := strings.TrimPrefix(h.Hash, "0x")
	return &bchain.ChainInfo{Chain: id, Blocks: int(h.Number), BestBlockHash: hash, Difficulty: "0"}, nil
}
