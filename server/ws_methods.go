package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// wsMethods maps every websocket method to its handler. Parameter names and
// defaults are Blockbook's (server/ws_types.go there).
var wsMethods map[string]wsHandler

func init() {
	wsMethods = map[string]wsHandler{
		"getInfo":                wsGetInfo,
		"getBlockHash":           wsGetBlockHash,
		"getBlock":               wsGetBlock,
		"getAccountInfo":         wsGetAccountInfo,
		"getContractInfo":        wsGetContractInfo,
		"getAccountUtxo":         wsGetAccountUtxo,
		"getTransaction":         wsGetTransaction,
		"getTransactionSpecific": wsGetTransactionSpecific,
		"getBalanceHistory":      wsGetBalanceHistory,
		"estimateFee":            wsEstimateFee,
		"longTermFeeRate":        wsLongTermFeeRate,
		"sendTransaction":        wsSendTransaction,
		"rpcCall":                wsRPCCall,
		"ping":                   wsPing,
		"getMempoolFilters":      wsGetMempoolFilters,
		"getBlockFilter":         wsGetBlockFilter,
		"getBlockFiltersBatch":   wsGetBlockFiltersBatch,
		"getSilentPaymentTweaks": wsGetSilentPaymentTweaks,

		"getCurrentFiatRates":       wsGetCurrentFiatRates,
		"getFiatRatesForTimestamps": wsGetFiatRatesForTimestamps,
		"getFiatRatesTickersList":   wsGetFiatRatesTickersList,
		"subscribeNewBlock":         wsSubscribeNewBlock,
		"unsubscribeNewBlock":       wsUnsubscribeNewBlock,
		"subscribeNewTransaction":   wsSubscribeNewTransaction,
		"unsubscribeNewTransaction": wsUnsubscribeNewTransaction,
		"subscribeAddresses":        wsSubscribeAddresses,
		"unsubscribeAddresses":      wsUnsubscribeAddresses,
		"subscribeFiatRates":        wsSubscribeFiatRates,
		"unsubscribeFiatRates":      wsUnsubscribeFiatRates,
	}
}

// WebsocketMethods lists the methods the websocket API answers, sorted.
func WebsocketMethods() []string {
	out := make([]string, 0, len(wsMethods))
	for m := range wsMethods {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Default page sizes of Blockbook's websocket API.
const (
	wsAccountPageSize = 25
	wsMaxFeeBlocks    = 32
)

func wsGetInfo(ctx context.Context, c *wsConn, _ *wsRequest) (any, error) {
	return c.s.svc.Info(ctx)
}

func wsGetBlockHash(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Height json.RawMessage `json:"height"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	height, err := wsHeight(p.Height)
	if err != nil {
		return nil, err
	}
	hash, err := c.s.svc.BlockHash(ctx, height)
	if err != nil {
		return nil, err
	}
	return struct {
		Hash string `json:"hash"`
	}{hash}, nil
}

// wsHeight reads getBlockHash's height: absent is 0; an integer no block
// can have (negative, or past 2^32-1, however many digits) is out of range
// rather than "not a number"; anything else not an integer keeps the
// type error every parameter gets.
func wsHeight(raw json.RawMessage) (int, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || s == "null" {
		return 0, nil
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		var p struct {
			Height int `json:"height"`
		}
		return 0, decodeParams(json.RawMessage(`{"height":`+s+`}`), &p)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil { // beyond int64: out of range either way
		return 0, &api.Error{Msg: "Block height " + truncate(s, 30) + " is out of range, it must be 0 to " + strconv.FormatInt(api.MaxBlockHeight, 10), Err: err}
	}
	if err := api.CheckBlockHeight(v); err != nil {
		return 0, err
	}
	return int(v), nil
}

func wsGetBlock(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		ID       string `json:"id"`
		Page     int    `json:"page"`
		PageSize int    `json:"pageSize"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	// Blockbook's websocket pages a block by up to 10,000 txs (REST: 1000).
	return c.s.svc.Block(ctx, p.ID, p.Page, min(p.PageSize, api.MaxWsBlockPageSize))
}

// wsDetails maps getAccountInfo's details; the websocket default is basic.
func wsDetails(s string) api.Details {
	if s == "" {
		return api.DetailsBasic
	}
	d := api.ParseDetails(s)
	if d == api.DetailsTxids && s != "txids" {
		return api.DetailsBasic
	}
	return d
}

func wsGetAccountInfo(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Descriptor        string   `json:"descriptor"`
		Details           string   `json:"details"`
		Tokens            string   `json:"tokens"`
		PageSize          int      `json:"pageSize"`
		Page              int      `json:"page"`
		From              int64    `json:"from"`
		To                int64    `json:"to"`
		ContractFilter    string   `json:"contractFilter"`
		SecondaryCurrency string   `json:"secondaryCurrency"`
		Gap               int      `json:"gap"`
		ConfirmedNonce    bool     `json:"confirmedNonce"`
		Protocols         []string `json:"protocols"`
		Runes             bool     `json:"runes"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.PageSize == 0 {
		p.PageSize = wsAccountPageSize
	}
	q := api.AddressQuery{
		Page: p.Page, PageSize: p.PageSize, FromHeight: clampHeight(p.From), ToHeight: clampHeight(p.To),
		Details: wsDetails(p.Details), Filter: api.NoFilter, Secondary: strings.ToLower(p.SecondaryCurrency),
		Tokens: api.ParseTokens(p.Tokens, api.TokensDerived), Gap: p.Gap, Contract: strings.TrimSpace(p.ContractFilter),
		ConfirmedNonce: p.ConfirmedNonce, Protocols: p.Protocols, Runes: p.Runes,
	}
	// An account first, else an address (Blockbook's order).
	if acc := c.s.caps.Accounts; acc != nil {
		a, err := acc.Account(ctx, p.Descriptor, q)
		if !api.IsNotAccount(err) {
			return a, err
		}
	}
	return c.s.svc.Address(ctx, p.Descriptor, q)
}

// clampHeight maps a height parameter to the index's range (0 = unbounded).
func clampHeight(h int64) uint32 {
	if h <= 0 {
		return 0
	}
	return uint32(min(h, int64(^uint32(0))))
}

func wsGetAccountUtxo(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Descriptor string `json:"descriptor"`
		Runes      bool   `json:"runes"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if c.s.caps.Utxos == nil {
		return nil, c.s.caps.NotSupported(api.CapUtxos)
	}
	if p.Runes {
		if c.s.caps.Runes == nil {
			return nil, c.s.caps.NotSupported(api.CapRunes)
		}
		us, err := c.s.caps.Runes.UtxosWithRunes(ctx, p.Descriptor, false, 0)
		return api.UtxoList(us), err
	}
	us, err := c.s.caps.Utxos.Utxos(ctx, p.Descriptor, false, 0)
	return api.UtxoList(us), err // marshals itself
}

type wsTxidParams struct {
	Txid string `json:"txid"`
}

func wsGetTransaction(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Txid  string `json:"txid"`
		Runes bool   `json:"runes"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.Runes {
		if c.s.caps.Runes == nil {
			return nil, c.s.caps.NotSupported(api.CapRunes)
		}
		return c.s.caps.Runes.TxWithRunes(ctx, p.Txid)
	}
	return c.s.svc.Tx(ctx, p.Txid)
}

func wsGetTransactionSpecific(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p wsTxidParams
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if c.s.caps.TxSpecific == nil {
		return nil, c.s.caps.NotSupported(api.CapTxSpecific)
	}
	return c.s.caps.TxSpecific.TxSpecific(ctx, p.Txid)
}

func wsGetBalanceHistory(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Descriptor string   `json:"descriptor"`
		From       int64    `json:"from"`
		To         int64    `json:"to"`
		Currencies []string `json:"currencies"`
		Gap        int      `json:"gap"`
		GroupBy    int64    `json:"groupBy"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	q := api.BalanceHistoryQuery{From: max(p.From, 0), To: max(p.To, 0), Currencies: p.Currencies, Gap: p.Gap}
	if p.GroupBy > 0 {
		q.GroupBy = uint32(min(p.GroupBy, int64(^uint32(0))))
	}
	return c.s.svc.BalanceHistory(ctx, p.Descriptor, q)
}

func wsEstimateFee(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Blocks   []int `json:"blocks"`
		Specific struct {
			Conservative *bool   `json:"conservative"`
			TxSize       float64 `json:"txsize"`
			Data         string  `json:"data"`
			From         string  `json:"from"`
			To           string  `json:"to"`
			Value        string  `json:"value"`
		} `json:"specific"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if len(p.Blocks) > wsMaxFeeBlocks {
		return nil, &api.Error{Msg: "blocks max " + strconv.Itoa(wsMaxFeeBlocks)}
	}
	if err := c.s.svc.CheckFeeTargets(p.Blocks); err != nil {
		return nil, err
	}
	fees := c.s.caps.FeeEstimates
	if fees == nil {
		if len(p.Blocks) == 0 { // nothing to ask an estimator
			return []api.FeeEstimate{}, nil
		}
		return nil, c.s.caps.NotSupported(api.CapFeeEstimates)
	}
	return fees.FeeEstimates(ctx, p.Blocks, api.FeeQuery{
		Conservative: p.Specific.Conservative == nil || *p.Specific.Conservative,
		TxSize:       int64(p.Specific.TxSize), Data: p.Specific.Data,
		From: p.Specific.From, To: p.Specific.To, Value: p.Specific.Value,
	})
}

// wsLongTermFeeRate answers longTermFeeRate (no params): {feePerUnit,
// blocks}, as Blockbook's; not supported where the fee estimator has no
// long-term rate (Ethereum-type chains, as in Blockbook).
func wsLongTermFeeRate(ctx context.Context, c *wsConn, _ *wsRequest) (any, error) {
	if c.s.caps.FeeEstimates == nil {
		return nil, c.s.caps.NotSupported(api.CapFeeEstimates)
	}
	lt, ok := c.s.caps.FeeEstimates.(api.LongTermFeeEstimator)
	if !ok {
		return nil, &api.Error{Msg: "longTermFeeRate is not supported for this coin", Err: api.ErrNotSupported}
	}
	return lt.LongTermFeeRate(ctx)
}

func wsRPCCall(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		From string `json:"from"`
		To   string `json:"to"`
		Data string `json:"data"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if c.s.caps.RPCCall == nil {
		return nil, c.s.caps.NotSupported(api.CapRPCCall)
	}
	if c.s.cfg.RPCCallAllowed != nil && !c.s.cfg.RPCCallAllowed(p.To, p.Data) {
		return nil, &api.Error{Msg: "Not supported"} // Blockbook's answer to a call outside its allowlists
	}
	return c.s.caps.RPCCall.RPCCall(ctx, p.From, p.To, p.Data)
}

func wsSendTransaction(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Hex string `json:"hex"`
		// Blockbook's field (its types spell it disableAlternativeRpc;
		// the match is case-insensitive): send through the node, not the
		// alternative (private) providers.
		DisableAlternativeRPC bool `json:"disableAlternativeRpc"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.DisableAlternativeRPC {
		ctx = bchain.WithDirectSend(ctx)
	}
	return c.s.svc.SendTx(ctx, p.Hex)
}

func wsPing(context.Context, *wsConn, *wsRequest) (any, error) { return struct{}{}, nil }

func wsGetMempoolFilters(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		ScriptType    string `json:"scriptType"`
		FromTimestamp int64  `json:"fromTimestamp"`
		M             uint64 `json:"M"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if c.s.caps.MempoolFilters == nil {
		return nil, c.s.caps.NotSupported(api.CapMempoolFilters)
	}
	return c.s.caps.MempoolFilters.MempoolFilters(ctx, p.ScriptType, p.FromTimestamp, p.M)
}

func wsGetCurrentFiatRates(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Currencies []string `json:"currencies"`
		Token      string   `json:"token"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.s.svc.CurrentFiatRates(ctx, p.Currencies, p.Token)
}

func wsGetFiatRatesForTimestamps(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Timestamps []int64  `json:"timestamps"`
		Currencies []string `json:"currencies"`
		Token      string   `json:"token"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.s.svc.FiatRatesForTimestamps(ctx, p.Timestamps, p.Currencies, p.Token)
}

func wsGetFiatRatesTickersList(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Timestamp int64  `json:"timestamp"`
		Token     string `json:"token"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	return c.s.svc.FiatRatesTickersList(ctx, p.Timestamp, p.Token)
}
