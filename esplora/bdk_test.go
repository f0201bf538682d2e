package esplora_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// BDK's Esplora client (rust-esplora-client): every path it requests is
// served, and each answer has the fields, with the JSON types, of the
// struct it deserializes into (its src/api.rs): a required field must be
// present and non-null, an Option may be absent or null, and numbers must
// fit the Rust type (serde refuses a negative u32 or a float for an
// integer).

// shape is a struct as serde reads it: field name to kind. Kinds: "txid"
// and "hash" (64 hex), "hex", "u32", "u64", "i32", "f64", "bool", "str",
// "[kind]" (array), "{name}" (a nested struct), "?kind" (an Option), and
// "*kind" (a field with a serde default: may be absent).
type shape map[string]string

var bdkShapes = map[string]shape{
	"Vin": {"txid": "txid", "vout": "u32", "prevout": "?{Vout}", "scriptsig": "hex", "witness": "*[hex]",
		"sequence": "u32", "is_coinbase": "bool"},
	"Vout":         {"value": "u64", "scriptpubkey": "hex"},
	"TxStatus":     {"confirmed": "bool", "block_height": "?u32", "block_hash": "?hash", "block_time": "?u64"},
	"MerkleProof":  {"block_height": "u32", "merkle": "[txid]", "pos": "u64"},
	"OutputStatus": {"spent": "bool", "txid": "?txid", "vin": "?u64", "status": "?{TxStatus}"},
	"BlockStatus":  {"in_best_chain": "bool", "height": "?u32", "next_best": "?hash"},
	"EsploraTx": {"txid": "txid", "version": "i32", "locktime": "u32", "vin": "[{Vin}]", "vout": "[{Vout}]",
		"size": "u64", "weight": "u64", "status": "{TxStatus}", "fee": "u64"},
	"BlockInfo": {"id": "hash", "height": "u32", "version": "i32", "timestamp": "u64", "tx_count": "u64",
		"size": "u64", "weight": "u64", "merkle_root": "hash", "previousblockhash": "?hash", "mediantime": "u64",
		"nonce": "u32", "bits": "u32", "difficulty": "f64"},
	"AddressStats":    {"address": "str", "chain_stats": "{Summary}", "mempool_stats": "{Summary}"},
	"ScriptHashStats": {"chain_stats": "{Summary}", "mempool_stats": "{Summary}"},
	"Summary": {"funded_txo_count": "u32", "funded_txo_sum": "u64", "spent_txo_count": "u32",
		"spent_txo_sum": "u64", "tx_count": "u32"},
	"Utxo":            {"txid": "txid", "vout": "u32", "status": "{TxStatus}", "value": "u64"},
	"MempoolStats":    {"count": "u64", "vsize": "u64", "total_fee": "u64", "fee_histogram": "[histogram]"},
	"MempoolRecentTx": {"txid": "txid", "fee": "u64", "vsize": "u64", "value": "u64"},
}

// checkKind reports why v does not deserialize as kind, or "".
func checkKind(v any, kind string) string {
	switch {
	case strings.HasPrefix(kind, "?"):
		if v == nil {
			return ""
		}
		return checkKind(v, kind[1:])
	case strings.HasPrefix(kind, "["):
		a, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("%v is not an array", v)
		}
		for i, e := range a {
			if why := checkKind(e, kind[1:len(kind)-1]); why != "" {
				return fmt.Sprintf("[%d]: %s", i, why)
			}
		}
		return ""
	case strings.HasPrefix(kind, "{"):
		return checkShape(v, kind[1:len(kind)-1])
	}
	switch kind {
	case "txid", "hash", "hex":
		s, ok := v.(string)
		if _, err := hex.DecodeString(s); !ok || err != nil || (kind != "hex" && len(s) != 64) {
			return fmt.Sprintf("%v is not %s", v, kind)
		}
	case "u32", "u64", "i32":
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Sprintf("%v is not a number", v)
		}
		bits, signed := map[string]int{"u32": 32, "u64": 64, "i32": 32}[kind], kind == "i32"
		var err error
		if signed {
			_, err = strconv.ParseInt(n.String(), 10, bits)
		} else {
			_, err = strconv.ParseUint(n.String(), 10, bits)
		}
		if err != nil {
			return fmt.Sprintf("%v is not %s", v, kind)
		}
	case "f64":
		n, ok := v.(json.Number)
		if f, err := n.Float64(); !ok || err != nil || math.IsNaN(f) {
			return fmt.Sprintf("%v is not f64", v)
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("%v is not bool", v)
		}
	case "str":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("%v is not a string", v)
		}
	case "histogram": // (f64, Weight): a two-element array
		a, ok := v.([]any)
		if !ok || len(a) != 2 || checkKind(a[0], "f64") != "" || checkKind(a[1], "u64") != "" {
			return fmt.Sprintf("%v is not (f64, u64)", v)
		}
	default:
		return "unknown kind " + kind
	}
	return ""
}

func checkShape(v any, name string) string {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprintf("%s: %v is not an object", name, v)
	}
	for field, kind := range bdkShapes[name] {
		fv, present := m[field]
		optional := strings.HasPrefix(kind, "?") || strings.HasPrefix(kind, "*")
		if !present || fv == nil && !strings.HasPrefix(kind, "?") {
			if optional {
				continue
			}
			return fmt.Sprintf("%s.%s is missing", name, field)
		}
		if why := checkKind(fv, strings.TrimPrefix(kind, "*")); why != "" {
			return fmt.Sprintf("%s.%s: %s", name, field, why)
		}
	}
	return ""
}

// TestBDKClientShapes requests every path of BDK's Esplora client and
// checks the answers against the structs it parses.
func TestBDKClientShapes(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tip := f.TipHeight()
	hash := f.BlockHash(tip)
	confirmed := f.Block(tip).Transactions[len(f.Block(tip).Transactions)-1].TxHash().String()
	pending := f.PendingPayment.TxHash().String()
	a := f.DemoAddress
	sh := sha256Of(scriptOf(t, f, a))
	shHex := hex.EncodeToString(sh[:])
	var firstChain []esploraTx
	f.getJSON(t, "/api/address/"+a+"/txs/chain", &firstChain)
	last := firstChain[len(firstChain)-1].Txid
	jsonPaths := map[string]string{
		"/api/tx/" + confirmed:                            "{EsploraTx}",
		"/api/tx/" + pending:                              "{EsploraTx}",
		"/api/tx/" + confirmed + "/status":                "{TxStatus}",
		"/api/tx/" + pending + "/status":                  "{TxStatus}",
		"/api/tx/" + confirmed + "/merkle-proof":          "{MerkleProof}",
		"/api/tx/" + confirmed + "/outspend/0":            "{OutputStatus}",
		"/api/tx/" + confirmed + "/outspends":             "[{OutputStatus}]",
		"/api/block/" + hash + "/status":                  "{BlockStatus}",
		"/api/block/" + hash:                              "{BlockInfo}",
		"/api/blocks":                                     "[{BlockInfo}]",
		"/api/blocks/" + strconv.Itoa(tip-1):              "[{BlockInfo}]",
		"/api/block/" + hash + "/txids":                   "[txid]",
		"/api/block/" + hash + "/txs":                     "[{EsploraTx}]",
		"/api/block/" + f.BlockHash(1) + "/txs/0":         "[{EsploraTx}]",
		"/api/address/" + a:                               "{AddressStats}",
		"/api/address/" + a + "/txs":                      "[{EsploraTx}]",
		"/api/address/" + a + "/txs/chain/" + last:        "[{EsploraTx}]",
		"/api/address/" + a + "/txs/mempool":              "[{EsploraTx}]",
		"/api/address/" + a + "/utxo":                     "[{Utxo}]",
		"/api/scripthash/" + shHex:                        "{ScriptHashStats}",
		"/api/scripthash/" + shHex + "/txs":               "[{EsploraTx}]",
		"/api/scripthash/" + shHex + "/txs/chain/" + last: "[{EsploraTx}]",
		"/api/scripthash/" + shHex + "/txs/mempool":       "[{EsploraTx}]",
		"/api/scripthash/" + shHex + "/utxo":              "[{Utxo}]",
		"/api/mempool":                                    "{MempoolStats}",
		"/api/mempool/recent":                             "[{MempoolRecentTx}]",
		"/api/mempool/txids":                              "[txid]",
	}
	for path, kind := range jsonPaths {
		var v any
		f.getJSON(t, path, &v)
		if why := checkKind(v, kind); why != "" {
			t.Errorf("%s: %s", path, why)
		}
	}
	var fees map[string]json.Number
	f.getJSON(t, "/api/fee-estimates", &fees) // HashMap<u16, f64>
	for k, v := range fees {
		if _, err := strconv.ParseUint(k, 10, 16); err != nil || checkKind(v, "f64") != "" {
			t.Errorf("fee-estimates %s: %s", k, v)
		}
	}
	// Text and binary answers.
	for path, check := range map[string]func(string) bool{
		"/api/blocks/tip/hash":                        func(s string) bool { return s == hash },
		"/api/blocks/tip/height":                      func(s string) bool { return s == strconv.Itoa(tip) },
		"/api/block-height/" + strconv.Itoa(tip):      func(s string) bool { return s == hash },
		"/api/block/" + hash + "/txid/0":              func(s string) bool { return s == f.Block(tip).Transactions[0].TxHash().String() },
		"/api/block/" + hash + "/header":              func(s string) bool { b, err := hex.DecodeString(s); return err == nil && len(b) == 80 },
		"/api/block/" + hash + "/raw":                 func(s string) bool { return s == string(f.Raw[tip]) },
		"/api/tx/" + confirmed + "/raw":               func(s string) bool { return len(s) > 60 },
		"/api/tx/" + confirmed + "/merkleblock-proof": func(s string) bool { _, err := hex.DecodeString(s); return err == nil && len(s) > 160 },
	} {
		if code, body := f.get(t, path); code != 200 || !check(body) {
			t.Errorf("%s: %d %.100s", path, code, body)
		}
	}
	// BDK reads a 404 as "none".
	unknown := strings.Repeat("0", 63) + "1"
	for _, p := range []string{"/api/tx/" + unknown, "/api/tx/" + unknown + "/raw", "/api/block/" + unknown,
		"/api/block/" + unknown + "/raw", "/api/block/" + unknown + "/header", "/api/block-height/" + strconv.Itoa(tip+5),
		"/api/tx/" + pending + "/merkle-proof", "/api/tx/" + pending + "/merkleblock-proof"} {
		if code, _ := f.get(t, p); code != 404 {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
}
