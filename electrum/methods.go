package electrum

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// versionNone marks a session whose negotiation failed (it ends).
const versionNone = "none"

// supported are the versions a client may negotiate, oldest first.
var supported = []string{"1.4", "1.4.1", "1.4.2", "1.6"}

// method is one protocol method: its parameter names, the versions that
// have it, and its handler.
type method struct {
	names []string
	// since and until bound the versions that have the method ("" none).
	since, until string
	fn           func(ctx context.Context, ss *session, p params) (any, error)
}

var methods map[string]method

func init() {
	methods = map[string]method{
		"server.banner":           {fn: serverBanner},
		"server.donation_address": {fn: serverDonation},
		"server.features":         {fn: serverFeatures},
		"server.peers.subscribe":  {fn: func(context.Context, *session, params) (any, error) { return []any{}, nil }},
		"server.add_peer":         {names: []string{"features"}, fn: func(context.Context, *session, params) (any, error) { return false, nil }},
		"server.ping":             {fn: func(context.Context, *session, params) (any, error) { return nil, nil }},

		"blockchain.block.header":      {names: []string{"height", "cp_height"}, fn: blockHeader},
		"blockchain.block.headers":     {names: []string{"start_height", "count", "cp_height"}, fn: blockHeaders},
		"blockchain.headers.subscribe": {fn: headersSubscribe},
		"blockchain.estimatefee":       {names: []string{"number", "mode"}, fn: estimateFee},
		"blockchain.relayfee":          {until: "1.4.2", fn: relayFee},
		"mempool.get_fee_histogram":    {fn: feeHistogram},
		"mempool.get_info":             {since: "1.6", fn: mempoolInfo},

		"blockchain.scripthash.get_balance": {names: []string{"scripthash"}, fn: scripthashBalance},
		"blockchain.scripthash.get_history": {names: []string{"scripthash"}, fn: scripthashHistory},
		"blockchain.scripthash.get_mempool": {names: []string{"scripthash"}, fn: scripthashMempool},
		"blockchain.scripthash.listunspent": {names: []string{"scripthash"}, fn: scripthashUnspent},
		"blockchain.scripthash.subscribe":   {names: []string{"scripthash"}, fn: scripthashSubscribe},
		"blockchain.scripthash.unsubscribe": {names: []string{"scripthash"}, fn: scripthashUnsubscribe},

		"blockchain.outpoint.subscribe":   {names: []string{"tx_hash", "txout_idx", "spk_hint"}, since: "1.6", fn: outpointSubscribe},
		"blockchain.outpoint.unsubscribe": {names: []string{"tx_hash", "txout_idx"}, since: "1.6", fn: outpointUnsubscribe},
		"blockchain.outpoint.get_status":  {names: []string{"tx_hash", "txout_idx", "spk_hint"}, since: "1.6", fn: outpointGetStatus},

		methodTweaks:                            {names: []string{"height", "count", "historical"}, fn: tweaksSubscribe},
		methodSP:                                {names: []string{"scan_private_key", "spend_public_key", "start", "labels"}, fn: spSubscribe},
		"blockchain.silentpayments.unsubscribe": {names: []string{"scan_private_key", "spend_public_key"}, fn: spUnsubscribe},

		"blockchain.transaction.broadcast":         {names: []string{"raw_tx"}, fn: txBroadcast},
		"blockchain.transaction.broadcast_package": {names: []string{"raw_txs", "verbose"}, since: "1.6", fn: txBroadcastPackage},
		"blockchain.transaction.get":               {names: []string{"tx_hash", "verbose"}, fn: txGet},
		"blockchain.transaction.get_merkle":        {names: []string{"tx_hash", "height"}, fn: txGetMerkle},
		"blockchain.transaction.id_from_pos":       {names: []string{"height", "tx_pos", "merkle"}, fn: txIDFromPos},
	}
}

// dispatch runs a call: server.version negotiates; any other call first
// fixes a session that skipped negotiation at 1.4, then runs the method
// the negotiated version has.
func (ss *session) dispatch(ctx context.Context, req *request) (any, error) {
	if req.Method == "server.version" {
		return ss.negotiate(req)
	}
	if ss.version == "" {
		ss.version = protocolMin // the protocol's default for a client that never says
	}
	m, ok := methods[req.Method]
	if !ok || (m.since != "" && cmpVersion(ss.version, m.since) < 0) || (m.until != "" && cmpVersion(ss.version, m.until) > 0) {
		return nil, newErr(codeMethodNotFound, "unknown method %q", req.Method)
	}
	p, err := parseParams(req.Params, m.names, false)
	if err != nil {
		return nil, err
	}
	return m.fn(ctx, ss, p)
}

// negotiate answers server.version: the highest version both speak. Only
// the first call negotiates; one that comes after other calls can only
// pick a 1.4 version (1.6 requires it first). No common version ends the
// session after the error.
func (ss *session) negotiate(req *request) (any, error) {
	if ss.explicit {
		return nil, badRequest("server.version already sent")
	}
	p, err := parseParams(req.Params, []string{"client_name", "protocol_version"}, true)
	if err != nil {
		return nil, err
	}
	cmin, cmax := protocolMin, protocolMin
	if p.has(1) {
		if cmin, cmax, err = versionRange(p[1]); err != nil {
			return nil, err
		}
	}
	limit := protocolMax
	if ss.version != "" {
		limit = "1.4.2"
	}
	ss.explicit = true
	chosen := ""
	for _, v := range supported {
		if cmpVersion(v, cmin) >= 0 && cmpVersion(v, cmax) <= 0 && cmpVersion(v, limit) <= 0 {
			chosen = v
		}
	}
	if chosen == "" {
		ss.version = versionNone
		return nil, badRequest("unsupported protocol version: %s to %s (this server speaks %s to %s)", cmin, cmax, protocolMin, protocolMax)
	}
	ss.version = chosen
	return []string{ss.s.cfg.ServerVersion, chosen}, nil
}

// versionRange reads protocol_version: a version, or [min, max].
func versionRange(raw []byte) (lo, hi string, err error) {
	p, err := parseParams(raw, []string{"min", "max"}, false)
	if err != nil || raw[0] != '[' {
		var s string
		if e := unmarshalString(raw, &s); e != nil || !validVersion(s) {
			return "", "", invalidParams("protocol_version must be a version or [min, max]")
		}
		return s, s, nil
	}
	if len(p) != 2 {
		return "", "", invalidParams("protocol_version must be [min, max]")
	}
	if lo, err = p.str(0, "protocol_min"); err != nil {
		return "", "", err
	}
	if hi, err = p.str(1, "protocol_max"); err != nil {
		return "", "", err
	}
	if !validVersion(lo) || !validVersion(hi) {
		return "", "", invalidParams("protocol versions look like 1.4 or 1.4.2")
	}
	return lo, hi, nil
}

func validVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, x := range parts {
		if n, err := strconv.Atoi(x); err != nil || n < 0 || n > 1000 {
			return false
		}
	}
	return true
}

// cmpVersion compares dotted versions ("1.4" < "1.4.1" < "1.6").
func cmpVersion(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// v16 reports whether the session speaks 1.6 or later.
func (ss *session) v16() bool { return cmpVersion(ss.version, "1.6") >= 0 }

// wireError turns a handler's error into the protocol's error: its own
// errors as they are, a user's mistake as a bad request, a history over
// the limit as Electrum servers word it, the rest as internal errors.
func (s *Server) wireError(method string, err error) *rpcError {
	if e, ok := asRPCError(err); ok {
		return e
	}
	if errors.Is(err, api.ErrTooManyTxs) {
		return badRequest("history too large")
	}
	if ue, ok := api.AsUserError(err); ok {
		return badRequest("%s", ue.Msg)
	}
	if errors.Is(err, bchain.ErrNodeUnavailable) {
		return newErr(codeDaemonError, "the blockchain node is not responding")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return newErr(codeInternal, "%s timed out", method)
	}
	s.log.Warn("electrum call failed", "method", method, "err", err)
	return newErr(codeInternal, "internal error")
}

func serverBanner(ctx context.Context, ss *session, _ params) (any, error) {
	if ss.s.cfg.Banner != "" {
		return ss.s.cfg.Banner, nil
	}
	info, err := ss.s.svc.Info(ctx)
	if err != nil {
		return nil, err
	}
	return "Welcome to " + ss.s.cfg.ServerVersion + ", an Electrum server for " + info.Name + ".", nil
}

func unmarshalString(raw []byte, s *string) error { return json.Unmarshal(raw, s) }

func serverDonation(_ context.Context, ss *session, _ params) (any, error) {
	return ss.s.cfg.DonationAddress, nil
}

// features answers server.features.
type features struct {
	GenesisHash   string               `json:"genesis_hash"`
	Hosts         map[string]HostPorts `json:"hosts"`
	ProtocolMax   string               `json:"protocol_max"`
	ProtocolMin   string               `json:"protocol_min"`
	Pruning       *int                 `json:"pruning"`
	ServerVersion string               `json:"server_version"`
	HashFunction  string               `json:"hash_function"`
	// MethodFlavours (1.6 with the outpoint methods only) advertises the
	// outpoint methods, in pull request #2's field.
	MethodFlavours map[string]any `json:"method_flavours,omitempty"`
	// SilentPayments (with the tweak index only) advertises the Silent
	// Payments methods and their caps.
	SilentPayments *spFeatures `json:"silent_payments,omitempty"`
}

func serverFeatures(ctx context.Context, ss *session, _ params) (any, error) {
	info, err := ss.s.svc.Info(ctx)
	if err != nil {
		return nil, err
	}
	hosts := ss.s.cfg.Hosts
	if hosts == nil {
		hosts = map[string]HostPorts{}
	}
	f := features{GenesisHash: info.Block0Hash, Hosts: hosts, ProtocolMax: protocolMax, ProtocolMin: protocolMin,
		ServerVersion: ss.s.cfg.ServerVersion, HashFunction: "sha256"}
	if ss.v16() && ss.s.outpointQueries() != nil {
		f.MethodFlavours = map[string]any{"blockchain.outpoint.subscribe": map[string]bool{"requires_spk_hint": false}}
	}
	f.SilentPayments = ss.s.spFeatures(ctx)
	return f, nil
}
