package app

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/server"
)

// Balance-history caps per surface when nothing sets them (Blockbook's:
// wallets ask over the websocket for whole histories; REST is open to
// anyone, so tighter).
const (
	defaultHistoryMaxTxsWS   = 1_000_000
	defaultHistoryMaxTxsREST = 250_000
)

// envSettings are what Blockbook's environment variables set here.
type envSettings struct {
	prefix string // the network, or the coin shortcut without one (upper case)
	// AllowedOrigins of the websocket; nil allows all.
	AllowedOrigins []string
	// ClientIP attributes requests behind proxies.
	ClientIP server.ClientIPConfig
	// HistoryMaxTxsWS and HistoryMaxTxsREST cap a balance history's txs
	// per surface; 0 means no cap.
	HistoryMaxTxsWS, HistoryMaxTxsREST int
	// RPCCall allows websocket rpcCalls (nil: all).
	RPCCall *rpcCallAllowlist
	// get reads a variable of this chain (the limits read theirs later,
	// once the flags are known).
	get envGetter
	// AdminUser and AdminPassword guard /admin (BB_ADMIN_USER,
	// BB_ADMIN_PASSWORD; surrounding space ignored).
	AdminUser, AdminPassword string
	// Unsupported are set variables for features this program lacks.
	Unsupported []string
	// StakingPool is _STAKING_POOL_CONTRACT ("<pool name>/<contract>",
	// Ethereum-type chains), with the variable's name.
	StakingPool, StakingPoolVar string
	// Relay is the private sending setup (_ALTERNATIVE_SENDTX_URLS,
	// _ALTERNATIVE_SENDTX_ONLY, _ALTERNATIVE_FETCH_MEMPOOL_TX).
	Relay relayEnv
}

// stakingPools are the staking pools to serve on a chain of type chain:
// the one configured, as Blockbook takes it; a malformed value or a
// Bitcoin-type chain is logged and serves none, as in Blockbook.
func (e *envSettings) stakingPools(chain bchain.ChainType, log *slog.Logger) []string {
	if e.StakingPool == "" {
		return nil
	}
	if chain != bchain.ChainEthereumType {
		log.Warn("environment variable has no effect in this version", "variable", e.StakingPoolVar+": staking pools are served on Ethereum-type chains only")
		return nil
	}
	if _, _, err := api.ParseStakingPool(e.StakingPool); err != nil {
		log.Error("staking pools not enabled", "variable", e.StakingPoolVar, "err", err)
		return nil
	}
	log.Info("staking pools enabled", "pools", e.StakingPool)
	return []string{e.StakingPool}
}

// unsupportedEnv are Blockbook's variables for features this program does
// not have; each one set is reported once at start. Names are suffixes of
// the prefix, or whole names when global.
var unsupportedEnv = []struct {
	name   string
	global bool
	why    string
}{
	{"INFURA_API_KEY", true, "fees come from the node; no Infura fee provider"},
}

// envPrefix is the prefix of a coin's variables: its network, or its coin
// shortcut when the config names no network (as Blockbook chooses it).
func envPrefix(cfg *bchain.Config) string {
	if cfg.Network != "" {
		return strings.ToUpper(cfg.Network)
	}
	return strings.ToUpper(cfg.CoinShortcut)
}

// readEnv reads Blockbook's variables through lookup (os.LookupEnv). A
// malformed value is an error naming the variable, as in Blockbook.
func readEnv(lookup func(string) (string, bool), cfg *bchain.Config) (*envSettings, error) {
	e := &envSettings{prefix: envPrefix(cfg)}
	get := func(suffix string) (string, string, bool) {
		name := e.prefix + "_" + suffix
		v, ok := lookup(name)
		// Blockbook's docs name some variables by the coin shortcut; when
		// the config has a network, the shortcut's name is read too.
		if !ok && cfg.Network != "" && cfg.CoinShortcut != "" {
			name = strings.ToUpper(cfg.CoinShortcut) + "_" + suffix
			v, ok = lookup(name)
		}
		return name, v, ok
	}
	e.get = get
	e.AdminUser, _ = lookup("BB_ADMIN_USER")
	e.AdminPassword, _ = lookup("BB_ADMIN_PASSWORD")
	e.AdminUser, e.AdminPassword = strings.TrimSpace(e.AdminUser), strings.TrimSpace(e.AdminPassword)
	if _, v, ok := get("WS_ALLOWED_ORIGINS"); ok {
		e.AllowedOrigins = splitList(v)
	}
	if err := e.readClientIP(get); err != nil {
		return nil, err
	}
	if err := e.readHistoryCaps(get); err != nil {
		return nil, err
	}
	if name, v, ok := get("STAKING_POOL_CONTRACT"); ok {
		e.StakingPoolVar, e.StakingPool = name, strings.TrimSpace(v)
	}
	e.Relay = readRelayEnv(get)
	var err error
	if e.RPCCall, err = readRPCCallAllowlist(get); err != nil {
		return nil, err
	}
	for _, u := range unsupportedEnv {
		name := u.name
		v, ok := lookup(name)
		if !u.global {
			name, v, ok = get(u.name)
		}
		if ok && strings.TrimSpace(v) != "" {
			e.Unsupported = append(e.Unsupported, name+": "+u.why)
		}
	}
	return e, nil
}

type envGetter func(suffix string) (name, value string, ok bool)

// readClientIP reads the proxy variables: _TRUSTED_PROXIES (legacy
// _WS_TRUSTED_PROXIES), _CLOUDFLARE_IPS (legacy _WS_CLOUDFLARE_IPS) and
// _CLOUDFLARE_PSEUDO_IPV4.
func (e *envSettings) readClientIP(get envGetter) error {
	name, v, ok := get("TRUSTED_PROXIES")
	if !ok {
		name, v, _ = get("WS_TRUSTED_PROXIES")
	}
	proxies, err := parseCIDRs(name, v)
	if err != nil {
		return err
	}
	for _, p := range proxies {
		// So wide a range would let much of the internet name its own IP.
		if (p.Addr().Is4() && p.Bits() < 8) || (p.Addr().Is6() && p.Bits() < 16) {
			return fmt.Errorf("%s: %s is too wide a range for trusted proxies (at least /8 for IPv4, /16 for IPv6)", name, p)
		}
	}
	e.ClientIP.RealIPProxies = proxies
	name, v, ok = get("CLOUDFLARE_IPS")
	if !ok {
		name, v, _ = get("WS_CLOUDFLARE_IPS")
	}
	if err := e.readCloudflare(name, v); err != nil {
		return err
	}
	name, v, _ = get("CLOUDFLARE_PSEUDO_IPV4")
	if v = strings.TrimSpace(v); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not a boolean (true or false)", name, v)
		}
		e.ClientIP.PseudoIPv4 = b
	}
	return nil
}

// readCloudflare reads _CLOUDFLARE_IPS: empty or "builtin" for the
// compiled-in ranges, "off" to believe CF-Connecting-IP from any peer,
// "@file" or a list for other ranges (a list with none is an error, so a
// typo cannot switch verification off).
func (e *envSettings) readCloudflare(name, v string) error {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "", "builtin", "default":
		e.ClientIP.Cloudflare = server.CloudflareRanges()
		return nil
	case "off", "none", "false", "0", "disabled":
		e.ClientIP.CloudflareAnyPeer = true
		return nil
	}
	src := v
	if path, ok := strings.CutPrefix(v, "@"); ok {
		data, err := os.ReadFile(strings.TrimSpace(path))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		src = string(data)
	}
	var lines []string
	for _, l := range strings.Split(src, "\n") {
		l, _, _ = strings.Cut(l, "#")
		lines = append(lines, l)
	}
	ranges, err := parseCIDRs(name, strings.Join(lines, ","))
	if err != nil {
		return err
	}
	if len(ranges) == 0 {
		return fmt.Errorf("%s: no ranges in %q (use builtin, off, @/path/to/file or a comma-separated CIDR list)", name, v)
	}
	e.ClientIP.Cloudflare = ranges
	return nil
}

// parseCIDRs parses a comma-separated CIDR list; IPv4-mapped IPv6 ranges
// are refused (they would never match an unmapped peer).
func parseCIDRs(name, v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range splitList(v) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a CIDR range: %w", name, f, err)
		}
		if p.Addr().Is4In6() {
			return nil, fmt.Errorf("%s: %q is an IPv4-mapped range; write it as IPv4", name, f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// readHistoryCaps reads _BALANCE_HISTORY_MAX_TXS (both surfaces) and the
// _WS_ and _REST_ ones, which win for their surface; 0 means no cap.
func (e *envSettings) readHistoryCaps(get envGetter) error {
	num := func(suffix string, def int) (int, error) {
		name, v, ok := get(suffix)
		if !ok {
			return def, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s: %q is not a non-negative integer (0 means no cap)", name, v)
		}
		return n, nil
	}
	ws, rest := defaultHistoryMaxTxsWS, defaultHistoryMaxTxsREST
	shared, err := num("BALANCE_HISTORY_MAX_TXS", -1)
	if err != nil {
		return err
	}
	if shared >= 0 {
		ws, rest = shared, shared
	}
	if e.HistoryMaxTxsWS, err = num("WS_BALANCE_HISTORY_MAX_TXS", ws); err != nil {
		return err
	}
	e.HistoryMaxTxsREST, err = num("REST_BALANCE_HISTORY_MAX_TXS", rest)
	return err
}

// rpcCallAllowlist is which rpcCalls may run: to an allowed contract, or
// with an allowed 4-byte method selector. A nil set does not restrict.
type rpcCallAllowlist struct {
	to, methods map[string]bool
}

// readRPCCallAllowlist reads _ALLOWED_RPC_CALL_TO and
// _ALLOWED_EVM_CALL_METHODS; set but empty, or a malformed selector, is an
// error (an allowlist silently dropped would allow every call).
func readRPCCallAllowlist(get envGetter) (*rpcCallAllowlist, error) {
	a := &rpcCallAllowlist{}
	if name, v, ok := get("ALLOWED_RPC_CALL_TO"); ok {
		a.to = map[string]bool{}
		for _, s := range splitList(v) {
			a.to[strings.ToLower(s)] = true
		}
		if len(a.to) == 0 {
			return nil, fmt.Errorf("%s is set but lists no addresses", name)
		}
	}
	if name, v, ok := get("ALLOWED_EVM_CALL_METHODS"); ok {
		a.methods = map[string]bool{}
		for _, s := range splitList(v) {
			sel := strings.TrimPrefix(strings.ToLower(s), "0x")
			if b, err := hex.DecodeString(sel); err != nil || len(b) != 4 {
				return nil, fmt.Errorf("%s: %q is not a 4-byte method selector in hex", name, s)
			}
			a.methods[sel] = true
		}
		if len(a.methods) == 0 {
			return nil, fmt.Errorf("%s is set but lists no method selectors", name)
		}
	}
	if a.to == nil && a.methods == nil {
		return nil, nil
	}
	return a, nil
}

// allowed reports whether a call to the address with the calldata may run.
// Calldata must be 0x-prefixed, even-length hex of at least 4 bytes to
// match a selector.
func (a *rpcCallAllowlist) allowed(to, data string) bool {
	if a == nil {
		return true
	}
	if a.to[strings.ToLower(strings.TrimSpace(to))] {
		return true
	}
	if len(data) < 10 || (data[:2] != "0x" && data[:2] != "0X") || len(data)%2 != 0 {
		return false
	}
	for _, c := range data[2:] { // the whole calldata must be hex
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return a.methods[strings.ToLower(data[2:10])]
}

// splitList splits a comma-separated value, trimming entries and dropping
// empty ones.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// logEnv reports, once each, the variables set for features this program
// lacks.
func (e *envSettings) logEnv(log *slog.Logger) {
	for _, u := range e.Unsupported {
		log.Warn("environment variable has no effect in this version", "variable", u)
	}
}
