package trondouble

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Server serves a Chain as java-tron does on one listener: the full
// node's /wallet/..., the solidity node's /walletsolidity/... and the
// JSON-RPC at /jsonrpc (on a real node three ports; Blockbook's config
// names each URL).
type Server struct {
	*httptest.Server
	chain   *Chain
	callsMu sync.Mutex
	calls   map[string]int64 // requests per path or JSON-RPC method
}

// Serve starts a server for c.
func Serve(c *Chain) *Server {
	s := &Server{chain: c, calls: map[string]int64{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Calls is how many requests a path (or JSON-RPC method) got.
func (s *Server) Calls(name string) int64 {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	return s.calls[name]
}

func (s *Server) count(name string) {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	s.calls[name]++
}

// Config is the blockchaincfg.json part pointing a client at the double.
func (s *Server) Config(coin string) map[string]any {
	return map[string]any{
		"coin_name": coin, "rpc_url": s.URL + "/jsonrpc", "rpc_timeout": 10,
		"tron_fullnode_http_url_template": s.URL, "tron_solidity_http_url_template": s.URL,
	}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/jsonrpc" {
		s.jsonRPC(w, body)
		return
	}
	s.count(r.URL.Path)
	var req map[string]any
	if len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			// java-tron answers malformed requests with 200 and {"Error": ...}.
			writeJSON(w, map[string]any{"Error": "class org.tron.json.JSONException : " + err.Error()})
			return
		}
	}
	solidity, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !ok || (solidity != "wallet" && solidity != "walletsolidity") {
		http.NotFound(w, r)
		return
	}
	s.chain.mu.Lock()
	defer s.chain.mu.Unlock()
	limit := int64(len(s.chain.blocks) - 1)
	if solidity == "walletsolidity" {
		limit = s.chain.solidLocked()
	}
	switch name {
	case "getblockbyid":
		b := s.blockByID(req["value"], limit)
		writeJSON(w, blockJSON(b, true))
	case "getblockbynum", "gettransactioninfobyblocknum":
		var b *Block
		if n, ok := req["num"].(float64); ok && n >= 0 && int64(n) <= limit {
			b = s.chain.blocks[int64(n)]
		}
		if name == "getblockbynum" {
			writeJSON(w, blockJSON(b, true))
		} else {
			writeJSON(w, infosJSON(b))
		}
	case "gettransactionbyid", "gettransactioninfobyid", "gettransactionfrompending":
		s.txAnswer(w, name, req["value"], limit)
	case "gettransactionlistfrompending":
		ids := []string{}
		for _, t := range s.chain.pending {
			ids = append(ids, hex.EncodeToString(t.ID[:]))
		}
		writeJSON(w, map[string]any{"txId": ids})
	case "getaccount", "getaccountresource", "getReward":
		a, ok := parseAddr(req["address"])
		if !ok {
			writeJSON(w, map[string]any{"Error": "class java.lang.IllegalArgumentException : Invalid address"})
			return
		}
		writeJSON(w, s.chain.accountAnswer(name, a))
	case "broadcasthex":
		str, _ := req["transaction"].(string)
		writeJSON(w, s.chain.broadcast(str))
	case "getblock", "getnowblock":
		b := s.chain.blocks[limit]
		if v, ok := req["id_or_num"].(string); ok {
			b = nil
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n <= limit {
				b = s.chain.blocks[n]
			} else if err != nil {
				b = s.blockByID(v, limit)
			}
		}
		detail, _ := req["detail"].(bool)
		writeJSON(w, blockJSON(b, detail || name == "getnowblock"))
	default:
		http.NotFound(w, r)
	}
}

// txAnswer answers the single-tx lookups: a mined tx up to limit (the
// pending pool for gettransactionfrompending); {} when unknown.
func (s *Server) txAnswer(w http.ResponseWriter, name string, v any, limit int64) {
	str, _ := v.(string)
	raw, err := hex.DecodeString(str)
	if err != nil || len(raw) != 32 {
		writeJSON(w, map[string]any{"Error": "class org.tron.core.services.http.JsonFormat$ParseException : INVALID hex String"})
		return
	}
	id := [32]byte(raw)
	if name == "gettransactionfrompending" {
		for _, t := range s.chain.pending {
			if t.ID == id {
				writeJSON(w, txJSON(t))
				return
			}
		}
		writeJSON(w, map[string]any{})
		return
	}
	t, b := s.chain.findTx(id)
	if t == nil || b.Number > limit {
		writeJSON(w, map[string]any{})
		return
	}
	if name == "gettransactionbyid" {
		writeJSON(w, txJSON(t))
		return
	}
	for _, info := range infosJSON(b) {
		if info["id"] == str {
			writeJSON(w, info)
		}
	}
}

// blockByID finds a block of the active branch up to limit by id; java-tron
// also serves blocks of other branches by id, but only the active branch
// matters to a follower.
func (s *Server) blockByID(v any, limit int64) *Block {
	str, _ := v.(string)
	id, err := hex.DecodeString(strings.TrimPrefix(str, "0x"))
	if err != nil || len(id) != 32 {
		return nil
	}
	b := s.chain.byID[[32]byte(id)]
	if b == nil || b.Number > limit || s.chain.blocks[b.Number] != b {
		return nil
	}
	return b
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// blockJSON is protocol.Block in java-tron's rendering; {} for none.
func blockJSON(b *Block, withTxs bool) map[string]any {
	if b == nil {
		return map[string]any{}
	}
	out := map[string]any{
		"blockID": hex.EncodeToString(b.ID[:]),
		"block_header": map[string]any{
			"raw_data": map[string]any{
				"number": b.Number, "txTrieRoot": hex.EncodeToString(make([]byte, 32)),
				"witness_address": b.Witness.Hex41(), "parentHash": hex.EncodeToString(b.Parent[:]),
				"version": 34, "timestamp": b.TimeMs,
			},
			"witness_signature": hex.EncodeToString(b.ID[:]) + hex.EncodeToString(b.ID[:]) + "00",
		},
	}
	if withTxs && len(b.Txs) > 0 {
		txs := make([]map[string]any, len(b.Txs))
		for i, t := range b.Txs {
			txs[i] = txJSON(t)
		}
		out["transactions"] = txs
	}
	return out
}

// txJSON is protocol.Transaction in java-tron's rendering, with its txID.
func txJSON(t *Tx) map[string]any {
	ret := "SUCCESS"
	switch {
	case t.Failed && t.Kind == KindCreateContract:
		ret = "OUT_OF_ENERGY"
	case t.Failed:
		ret = "REVERT"
	}
	raw, _ := json.Marshal(t.Raw)
	return map[string]any{
		"ret": []map[string]any{{"contractRet": ret}}, "signature": []string{hex.EncodeToString(t.ID[:]) + "1b"},
		"txID": hex.EncodeToString(t.ID[:]), "raw_data": t.Raw, "raw_data_hex": hex.EncodeToString(raw),
	}
}

// infosJSON is gettransactioninfobyblocknum's answer: one
// protocol.TransactionInfo per tx ([] for a block without txs or none).
func infosJSON(b *Block) []map[string]any {
	out := []map[string]any{}
	if b == nil {
		return out
	}
	for _, t := range b.Txs {
		info := map[string]any{
			"id": hex.EncodeToString(t.ID[:]), "blockNumber": b.Number, "blockTimeStamp": b.TimeMs,
			"receipt": map[string]any{"net_usage": 268},
		}
		if t.Fee > 0 {
			info["fee"] = t.Fee
		}
		switch t.Kind {
		case KindWithdrawReward:
			info["withdraw_amount"] = t.Withdrawn
		case KindWithdrawExpire:
			info["withdraw_expire_amount"] = t.Withdrawn
		case KindUnfreezeV1:
			info["unfreeze_amount"] = t.Withdrawn
		}
		if t.Kind == KindCreateContract {
			rc := map[string]any{"energy_usage_total": 120_000, "energy_fee": t.Fee, "result": "SUCCESS"}
			info["contract_address"] = t.Created.Hex41()
			if t.Failed {
				rc["result"] = "OUT_OF_ENERGY"
				info["result"], info["resMessage"] = "FAILED", hex.EncodeToString([]byte("Not enough energy"))
			}
			info["receipt"] = rc
		}
		if t.Kind == KindTrigger {
			rc := map[string]any{"energy_usage_total": 14650, "energy_fee": t.Fee - 345_000, "net_fee": 345_000, "result": "SUCCESS"}
			info["contract_address"] = t.To.Hex41()
			info["contractResult"] = []string{word([]byte{1})}
			if t.Failed {
				rc["result"] = "REVERT"
				info["result"], info["resMessage"] = "FAILED", hex.EncodeToString([]byte("REVERT opcode executed"))
				info["contractResult"] = []string{""}
			} else {
				var amount [8]byte
				binary.BigEndian.PutUint64(amount[:], uint64(t.Amount))
				info["log"] = []map[string]any{{
					"address": hex.EncodeToString(t.Token[:]),
					"topics":  []string{transferTopic, word(t.Owner[:]), word(t.TokenTo[:])},
					"data":    word(amount[:]),
				}}
			}
			info["receipt"] = rc
			if t.InternalTo != nil {
				it := map[string]any{
					"hash": word(t.ID[:8]), "caller_address": t.To.Hex41(), "transferTo_address": t.InternalTo.Hex41(),
					"callValueInfo": []map[string]any{{"callValue": t.CallValue}}, "note": hex.EncodeToString([]byte("call")),
				}
				if t.Failed {
					it["rejected"] = true
				}
				info["internal_transactions"] = []map[string]any{it}
			}
		}
		out = append(out, info)
	}
	return out
}

// jsonRPC answers the Ethereum-compatible methods a follower uses.
func (s *Server) jsonRPC(w http.ResponseWriter, body []byte) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params []any           `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "parse error"}})
		return
	}
	s.count(req.Method)
	s.chain.mu.Lock()
	defer s.chain.mu.Unlock()
	var result any
	switch req.Method {
	case "eth_chainId":
		result = s.chain.chainID
	case "net_version":
		result = s.chain.netVersion
	case "eth_call":
		out, ok := s.call(req.Params)
		if !ok {
			writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32000, "message": "REVERT opcode executed"}})
			return
		}
		result = "0x" + out
	case "eth_getBalance":
		var a Addr
		ok := false
		if len(req.Params) > 0 {
			str, _ := req.Params[0].(string)
			a, ok = parseAddr("41" + strings.TrimPrefix(str, "0x"))
		}
		if !ok {
			writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": "invalid address"}})
			return
		}
		result = fmt.Sprintf("0x%x", max(s.chain.factsLocked(a).Balance, 0))
	case "eth_blockNumber":
		result = fmt.Sprintf("0x%x", len(s.chain.blocks)-1)
	case "eth_getBlockByNumber", "eth_getBlockByHash":
		var b *Block
		if len(req.Params) > 0 {
			arg, _ := req.Params[0].(string)
			if req.Method == "eth_getBlockByHash" {
				b = s.blockByID(arg, int64(len(s.chain.blocks)-1))
				if b == nil { // a reorged block is still known by hash
					if id, err := hex.DecodeString(strings.TrimPrefix(arg, "0x")); err == nil && len(id) == 32 {
						b = s.chain.byID[[32]byte(id)]
					}
				}
			} else if arg == "latest" {
				b = s.chain.blocks[len(s.chain.blocks)-1]
			} else if n, err := strconv.ParseUint(strings.TrimPrefix(arg, "0x"), 16, 63); err == nil && n < uint64(len(s.chain.blocks)) {
				b = s.chain.blocks[n]
			}
		}
		if b != nil {
			result = rpcBlock(b)
		}
	default:
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "the method " + req.Method + " does not exist/is not available"}})
		return
	}
	writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

// call answers the read-only calls of the tokens' metadata (name, symbol,
// decimals); anything else reverts, as a TRC-20 without ERC-165 does.
func (s *Server) call(params []any) (string, bool) {
	if len(params) == 0 {
		return "", false
	}
	msg, _ := params[0].(map[string]any)
	to, _ := msg["to"].(string)
	data, _ := msg["data"].(string)
	i := s.chain.tokenIndex(strings.TrimPrefix(to, "0x"))
	if i < 0 {
		return "", false
	}
	switch strings.TrimPrefix(data, "0x") {
	case "06fdde03":
		return abiString(TokenName(i)), true
	case "95d89b41":
		return abiString(TokenSymbol(i)), true
	case "313ce567":
		return word([]byte{byte(TokenDecimals(i))}), true
	}
	// balanceOf(address): InitialTokens plus the holder's net of the
	// token's transfers (a negative one reverts).
	if d := strings.TrimPrefix(data, "0x"); len(d) == 8+64 && d[:8] == "70a08231" {
		if a, ok := parseAddr("41" + d[8+24:]); ok {
			v := s.chain.factsLocked(a).Tokens[s.chain.Tokens[i]]
			if v == nil {
				v = big.NewInt(InitialTokens)
			}
			if v.Sign() >= 0 {
				return word(v.Bytes()), true
			}
		}
	}
	return "", false
}

// abiString is the ABI encoding of a string return value.
func abiString(v string) string {
	pad := make([]byte, (len(v)+31)/32*32)
	copy(pad, v)
	return word([]byte{32}) + word(big64(int64(len(v)))) + hex.EncodeToString(pad)
}

// rpcBlock is java-tron's JSON-RPC block without full txs: Ethereum's
// fields, hashes with 0x, the time in seconds, gas fields zero.
func rpcBlock(b *Block) map[string]any {
	txs := make([]string, len(b.Txs))
	size := 200
	for i, t := range b.Txs {
		txs[i] = "0x" + hex.EncodeToString(t.ID[:])
		raw, _ := json.Marshal(t.Raw)
		size += len(raw)/2 + 70
	}
	zero32 := "0x" + hex.EncodeToString(make([]byte, 32))
	return map[string]any{
		"number": fmt.Sprintf("0x%x", b.Number), "hash": "0x" + hex.EncodeToString(b.ID[:]),
		"parentHash": "0x" + hex.EncodeToString(b.Parent[:]), "nonce": "0x0000000000000000",
		"sha3Uncles": zero32, "logsBloom": "0x" + hex.EncodeToString(make([]byte, 256)),
		"transactionsRoot": zero32, "stateRoot": zero32, "receiptsRoot": zero32,
		"miner": "0x" + hex.EncodeToString(b.Witness[:]), "difficulty": "0x0", "totalDifficulty": "0x0",
		"extraData": "0x", "size": fmt.Sprintf("0x%x", size), "gasLimit": "0x0", "gasUsed": "0x0",
		"timestamp": fmt.Sprintf("0x%x", b.TimeMs/1000), "transactions": txs, "uncles": []string{},
	}
}
