package spchain

// client.go: a light wallet over the -silentpayments routes, knowing only
// the receiver's scan key, spend public key and labels.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"
	"github.com/btcsuite/btcd/btcutil/v2/gcs/builder"
	"github.com/btcsuite/btcd/chainhash/v2"

	"github.com/openexplorer/blockbook/internal/bip352"
)

var client = &http.Client{Timeout: 30 * time.Second}

// GetJSON fetches base+path, requiring 200, into out.
func GetJSON(base, path string, out any) error {
	resp, err := client.Get(base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %v: %s", path, err, body)
	}
	return nil
}

// Utxo is an element of /utxos/:height (BlindBit's shape).
type Utxo struct {
	Txid         string `json:"txid"`
	Vout         uint32 `json:"vout"`
	Value        uint64 `json:"value"`
	ScriptPubKey string `json:"scriptpubkey"`
	Spent        bool   `json:"spent"`
}

// Found is an output a scan found, with its tx and spent state.
type Found struct {
	Utxo
	Label   uint32
	Labeled bool
}

// Scan fetches the block's tweaks (tweakRoute: "/tweaks/" for the
// cut-through answer, "/tweak-index/" for every tweak) and its taproot
// outputs (/utxos/), and runs the BIP's scan of every tweak against them,
// as a light wallet matches a block: it returns the outputs found by key.
func Scan(base string, height uint32, tweakRoute string, s *bip352.Scanner) (map[[32]byte]Found, error) {
	var tweaks []string
	if err := GetJSON(base, fmt.Sprintf("%s%d", tweakRoute, height), &tweaks); err != nil {
		return nil, err
	}
	var utxos []Utxo
	if err := GetJSON(base, fmt.Sprintf("/utxos/%d", height), &utxos); err != nil {
		return nil, err
	}
	byKey := map[[32]byte]Utxo{}
	var keys [][32]byte
	for _, u := range utxos {
		b, err := hex.DecodeString(u.ScriptPubKey)
		if err != nil || !bip352.IsP2TR(b) {
			return nil, fmt.Errorf("utxo %s:%d: script %q is not taproot", u.Txid, u.Vout, u.ScriptPubKey)
		}
		k := [32]byte(b[2:])
		byKey[k] = u
		keys = append(keys, k)
	}
	found := map[[32]byte]Found{}
	for _, tw := range tweaks {
		b, err := hex.DecodeString(tw)
		if err != nil {
			return nil, fmt.Errorf("tweak %q: %v", tw, err)
		}
		ms, err := s.Scan(b, append([][32]byte(nil), keys...))
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			found[m.Output] = Found{Utxo: byKey[m.Output], Label: m.Label, Labeled: m.Labeled}
		}
	}
	return found, nil
}

// Filter is a /filter/:type/:height answer (BlindBit's shape).
type Filter struct {
	FilterType  int    `json:"filter_type"`
	BlockHeight uint32 `json:"block_height"`
	BlockHash   string `json:"block_hash"`
	Data        string `json:"data"`
}

// Matches reports whether the filter holds every item, and its size.
func (f *Filter) Matches(items [][]byte) (ok bool, n uint32, err error) {
	data, err := hex.DecodeString(f.Data)
	if err != nil {
		return false, 0, err
	}
	gf, err := gcs.FromNBytes(builder.DefaultP, builder.DefaultM, data)
	if err != nil {
		return false, 0, err
	}
	h, err := chainhash.NewHashFromStr(f.BlockHash)
	if err != nil {
		return false, 0, err
	}
	for _, it := range items {
		if ok, err := gf.Match(builder.DeriveKey(h), it); err != nil || !ok {
			return false, gf.N(), err
		}
	}
	return true, gf.N(), nil
}
