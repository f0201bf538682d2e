package bchain

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"
)

// Config is Blockbook's runtime chain configuration (blockchaincfg.json), so
// an operator can point this binary at an existing deployment's file. Keys a
// coin plugin needs beyond these are read from Raw by the plugin.
type Config struct {
	CoinName              string `json:"coin_name"`
	CoinShortcut          string `json:"coin_shortcut"`
	CoinLabel             string `json:"coin_label"`
	Network               string `json:"network"`
	RPCURL                string `json:"rpc_url"`
	RPCURLWS              string `json:"rpc_url_ws"`
	RPCUser               string `json:"rpc_user"`
	RPCPass               string `json:"rpc_pass"`
	RPCTimeout            int    `json:"rpc_timeout"` // seconds
	Parse                 bool   `json:"parse"`
	MessageQueueBinding   string `json:"message_queue_binding"`
	Subversion            string `json:"subversion"`
	AddressFormat         string `json:"address_format"`
	XPubMagic             uint32 `json:"xpub_magic"`
	XPubMagicSegwitP2sh   uint32 `json:"xpub_magic_segwit_p2sh"`
	XPubMagicSegwitNative uint32 `json:"xpub_magic_segwit_native"`
	Slip44                uint32 `json:"slip44"`
	MempoolWorkers        int    `json:"mempool_workers"`
	MempoolSubWorkers     int    `json:"mempool_sub_workers"`
	BlockAddressesToKeep  int    `json:"block_addresses_to_keep"`

	// Golomb filters (Blockbook's keys): P = 0 disables them; scripts is
	// "", "taproot" or "taproot-noordinals".
	BlockGolombFilterP        uint8  `json:"block_golomb_filter_p"`
	BlockFilterScripts        string `json:"block_filter_scripts"`
	BlockFilterUseZeroedKey   bool   `json:"block_filter_use_zeroed_key"`
	MempoolGolombFilterP      uint8  `json:"mempool_golomb_filter_p"`
	MempoolFilterScripts      string `json:"mempool_filter_scripts"`
	MempoolFilterUseZeroedKey bool   `json:"mempool_filter_use_zeroed_key"`

	// Fiat rates (Blockbook's keys, parsed and checked by fiat): the
	// provider ("coingecko"; empty disables the download), its parameters
	// as a JSON string ({"coin", "periodSeconds", "url", "plan"}), and an
	// optional comma-separated list of the vs-currencies to keep.
	FiatRates             string `json:"fiat_rates"`
	FiatRatesParams       string `json:"fiat_rates_params"`
	FiatRatesVsCurrencies string `json:"fiat_rates_vs_currencies"`
	// AlternativeEstimateFee names Blockbook's alternative fee provider
	// ("mempoolspaceblock", "mempoolspace"; package fees), with its JSON
	// params as a string.
	AlternativeEstimateFee       string `json:"alternative_estimate_fee"`
	AlternativeEstimateFeeParams string `json:"alternative_estimate_fee_params"`

	// Keys this implementation adds (documented in docs/operations.md).

	// BlockPollIntervalMs is how often the node is polled for a new tip when
	// no push notification arrives; default 1000 without push, 10000 with.
	BlockPollIntervalMs int `json:"block_poll_interval_ms"`
	// BlockNotifications selects the push channel: "auto" (ZMQ when
	// message_queue_binding is set, else btcd's websocket when the node is
	// btcd), "zmq", "btcd", or "none" (polling only).
	BlockNotifications string `json:"block_notifications"`
	// PushdataIndex keeps the pushdata index (-pushdataindex): the sha256
	// of every key- or hash-sized push of the chain's scripts, for
	// /api/v2/pushdata/search. It can be switched on only over an empty
	// datadir.
	PushdataIndex bool `json:"pushdata_index"`
	// RunesIndex keeps the Runes index (-runesindex): rune balances per
	// output and address, and rune entries, for /api/v2/rune and the
	// runes parameter. Bitcoin networks only; an empty datadir only.
	RunesIndex bool `json:"runes_index"`
	// SilentPaymentsIndex keeps the Silent Payments tweak index
	// (-silentpaymentsindex) that the -silentpayments listener serves;
	// Bitcoin and its test networks only, over an empty datadir.
	SilentPaymentsIndex bool `json:"silent_payments_index"`

	// Ethereum-type keys (Blockbook's names).

	// AddressAliases lets the API show names (ENS, contracts) for addresses.
	AddressAliases bool `json:"address_aliases"`
	// AverageBlockTimeMs is the chain's block interval; it sizes the
	// notifier's watchdog when block_subscription_timeout_ms is unset.
	AverageBlockTimeMs int `json:"averageBlockTimeMs"`
	// Eip1559Fees makes fee estimates EIP-1559 suggestions.
	Eip1559Fees bool `json:"eip1559Fees"`
	// ProcessInternalTransactions traces blocks (debug_traceBlockByHash,
	// callTracer) for internal transfers and created contracts.
	ProcessInternalTransactions bool `json:"processInternalTransactions"`
	// MempoolTxTimeoutHours drops pending txs never mined within this time.
	MempoolTxTimeoutHours int `json:"mempoolTxTimeoutHours"`
	// MempoolTxTimeout and AlternativeMempoolTxTimeout (Go durations) are
	// Blockbook's pending-tx retention and alternative-provider cache
	// retention; see MempoolTimeout and AlternativeMempoolTimeout.
	MempoolTxTimeout            string `json:"mempoolTxTimeout,omitempty"`
	AlternativeMempoolTxTimeout string `json:"alternativeMempoolTxTimeout,omitempty"`
	// QueryBackendOnMempoolResync asks the node for each pending tx on
	// resync instead of trusting the subscription alone.
	QueryBackendOnMempoolResync bool `json:"queryBackendOnMempoolResync"`
	// BlockSubscriptionTimeoutMs (this implementation's key): when the
	// newHeads subscription is silent this long, the node is polled
	// (eth_blockNumber) and the subscription is re-established.
	BlockSubscriptionTimeoutMs int `json:"block_subscription_timeout_ms"`
	// DisableMempoolSync: no pending-tx subscription; the mempool follows
	// the node by its periodic resyncs, and txs sent through this server
	// enter it at once (Blockbook's OP-stack and Arbitrum configs set it).
	DisableMempoolSync bool `json:"disableMempoolSync"`
	// MissingBlockRetry retries a block the node does not have yet.
	MissingBlockRetry *MissingBlockRetry `json:"missingBlockRetry"`
	// TraceTimeout is the node-side time limit of a block trace ("10s").
	TraceTimeout string `json:"trace_timeout"`
	// ConsensusNodeVersion is the consensus client's node-version URL,
	// whose answer the status shows as backend consensus_version.
	ConsensusNodeVersion string `json:"consensusNodeVersion"`
	// ENSRegistry and ENSBaseRegistrar (this implementation's keys; both
	// or neither) are the ENS registry and .eth base registrar that .eth
	// names resolve through; unset, Ethereum mainnet's (chain id 1) are
	// used, as Blockbook hard-codes them, and other chains resolve none.
	ENSRegistry      string `json:"ens_registry"`
	ENSBaseRegistrar string `json:"ens_base_registrar"`
	// FourByteSignatures is the 4-byte directory's signatures endpoint
	// (https://www.4byte.directory/api/v1/signatures/) whose signatures
	// decode txs' input data (parsedData); unset, only the standard
	// contracts' calls decode.
	FourByteSignatures string `json:"fourByteSignatures"`

	// Raw is the whole document, for plugin-specific keys.
	Raw json.RawMessage `json:"-"`
}

// MissingBlockRetry is Blockbook's missingBlockRetry object; zero fields
// take the defaults (1000 ms, 10 attempts, 60000 ms).
type MissingBlockRetry struct {
	RetryDelayMs        int `json:"retryDelayMs"`
	RecheckThreshold    int `json:"recheckThreshold"`
	TipRecheckThreshold int `json:"tipRecheckThreshold"`
	MaxStallMs          int `json:"maxStallMs"`
}

// Defaults Blockbook applies when a key is missing or zero.
const (
	DefaultBlockAddressesToKeep = 300
	DefaultRPCTimeout           = 25 * time.Second
)

// ErrConfig marks configuration mistakes; the message says which key.
var ErrConfig = errors.New("configuration error")

// LoadConfig reads and validates a blockchaincfg.json file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return ParseConfig(data)
}

// ParseConfig validates a blockchaincfg.json document. Unknown keys are
// ignored, as Blockbook does, because deployments carry keys for features
// configured elsewhere or not implemented.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: blockchain config is not valid JSON: %v", ErrConfig, err)
	}
	c.Raw = append(json.RawMessage(nil), data...)
	if c.CoinName == "" {
		return nil, fmt.Errorf("%w: missing required key coin_name", ErrConfig)
	}
	if c.RPCURL == "" {
		return nil, fmt.Errorf("%w: missing required key rpc_url", ErrConfig)
	}
	if c.BlockAddressesToKeep < 0 {
		return nil, fmt.Errorf("%w: block_addresses_to_keep must not be negative", ErrConfig)
	}
	if c.BlockAddressesToKeep == 0 {
		c.BlockAddressesToKeep = DefaultBlockAddressesToKeep
	}
	switch c.BlockNotifications {
	case "", "auto", "zmq", "btcd", "none":
	default:
		return nil, fmt.Errorf("%w: block_notifications must be auto, zmq, btcd or none, not %q", ErrConfig, c.BlockNotifications)
	}
	// Golomb parameters above 32 overflow Blockbook's filters (and the
	// index's checks); the scripts are Blockbook's three selections.
	if c.BlockGolombFilterP > 32 {
		return nil, fmt.Errorf("%w: block_golomb_filter_p must be at most 32, not %d", ErrConfig, c.BlockGolombFilterP)
	}
	switch c.BlockFilterScripts {
	case "", "taproot", "taproot-noordinals":
	default:
		return nil, fmt.Errorf("%w: block_filter_scripts must be \"\", \"taproot\" or \"taproot-noordinals\", not %q", ErrConfig, c.BlockFilterScripts)
	}
	if err := c.checkEthKeys(); err != nil {
		return nil, err
	}
	return &c, nil
}

// checkEthKeys validates the Ethereum-type keys whose values have a form.
func (c *Config) checkEthKeys() error {
	if c.TraceTimeout != "" {
		if d, err := time.ParseDuration(c.TraceTimeout); err != nil || d <= 0 {
			return fmt.Errorf("%w: trace_timeout must be a positive duration such as \"10s\", not %q", ErrConfig, c.TraceTimeout)
		}
	}
	if r := c.MissingBlockRetry; r != nil && (r.RetryDelayMs < 0 || r.RecheckThreshold < 0 || r.TipRecheckThreshold < 0 || r.MaxStallMs < 0) {
		return fmt.Errorf("%w: missingBlockRetry values must not be negative", ErrConfig)
	}
	if (c.ENSRegistry == "") != (c.ENSBaseRegistrar == "") || !isHexAddress(c.ENSRegistry) || !isHexAddress(c.ENSBaseRegistrar) {
		return fmt.Errorf("%w: ens_registry and ens_base_registrar must both be 0x-prefixed 20-byte hex addresses, not %q and %q", ErrConfig, c.ENSRegistry, c.ENSBaseRegistrar)
	}
	for _, k := range []struct{ name, value string }{{"consensusNodeVersion", c.ConsensusNodeVersion}, {"fourByteSignatures", c.FourByteSignatures}} {
		if k.value == "" {
			continue
		}
		if u, err := url.Parse(k.value); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: %s must be an http(s) URL, not %q", ErrConfig, k.name, k.value)
		}
	}
	return nil
}

// EthOnlyKeys are the keys set in cfg that only Ethereum-type coins use
// (the program warns once that they do nothing on other chains).
func (c *Config) EthOnlyKeys() []string {
	var out []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"disableMempoolSync", c.DisableMempoolSync}, {"missingBlockRetry", c.MissingBlockRetry != nil},
		{"trace_timeout", c.TraceTimeout != ""}, {"consensusNodeVersion", c.ConsensusNodeVersion != ""},
		{"ens_registry", c.ENSRegistry != ""}, {"ens_base_registrar", c.ENSBaseRegistrar != ""},
		{"fourByteSignatures", c.FourByteSignatures != ""},
	} {
		if k.set {
			out = append(out, k.name)
		}
	}
	return out
}

// Timeout returns the per-request RPC timeout.
func (c *Config) Timeout() time.Duration {
	if c.RPCTimeout <= 0 {
		return DefaultRPCTimeout
	}
	return time.Duration(c.RPCTimeout) * time.Second
}

// isHexAddress reports whether s is "" or 0x and 40 hex digits.
func isHexAddress(s string) bool {
	if s == "" {
		return true
	}
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") {
		return false
	}
	_, err := hex.DecodeString(s[2:])
	return err == nil
}
