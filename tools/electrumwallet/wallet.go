package electrumwallet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Restore creates a wallet file named name in the data directory from text
// (an Electrum seed, a master public key such as a vpub, a master private
// key such as a vprv, or addresses), without a password, loads it into the
// daemon and returns its path, which names it in the other calls.
func (d *Daemon) Restore(ctx context.Context, text, name string) (string, error) {
	dir := filepath.Join(d.dir, "wallets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("electrumwallet: %w", err)
	}
	path := filepath.Join(dir, name)
	var r struct {
		Path string `json:"path"`
	}
	if err := d.Call(ctx, "restore", map[string]any{"text": text, "wallet_path": path}, &r); err != nil {
		return "", err
	}
	var ok bool
	if err := d.Call(ctx, "load_wallet", map[string]any{"wallet_path": path}, &ok); err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("electrumwallet: load_wallet %s: not loaded", path)
	}
	return path, nil
}

// Info is the daemon's view of the network (getinfo).
type Info struct {
	Server           string `json:"server"`
	BlockchainHeight int32  `json:"blockchain_height"`
	ServerHeight     int32  `json:"server_height"`
	Connected        bool   `json:"connected"`
	Version          string `json:"version"`
}

// Info returns getinfo.
func (d *Daemon) Info(ctx context.Context) (Info, error) {
	var i Info
	err := d.Call(ctx, "getinfo", nil, &i)
	return i, err
}

// Synchronized reports is_synchronized: the wallet has the histories of
// all its addresses and has derived addresses up to its gap limit.
func (d *Daemon) Synchronized(ctx context.Context, wallet string) (bool, error) {
	var ok bool
	err := d.Call(ctx, "is_synchronized", map[string]any{"wallet": wallet}, &ok)
	return ok, err
}

// WaitSynced waits until the daemon is connected, has verified the headers
// up to height at least, and the wallet is synchronized.
func (d *Daemon) WaitSynced(ctx context.Context, wallet string, height int32, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var info Info
	var synced bool
	var err error
	for {
		if d.Exited() {
			return fmt.Errorf("electrumwallet: daemon exited")
		}
		info, err = d.Info(ctx)
		if err == nil && info.Connected && info.BlockchainHeight >= height {
			if synced, err = d.Synchronized(ctx, wallet); err == nil && synced {
				return nil
			}
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err == nil && !info.Connected {
		err = errNotConnected
	}
	return fmt.Errorf("electrumwallet: wallet not synchronized at height %d in %v (info %+v, synchronized %v): %v",
		height, timeout, info, synced, err)
}

// Balance is a wallet balance in satoshis.
type Balance struct {
	Confirmed, Unconfirmed, Unmatured int64
}

// Balance returns getbalance.
func (d *Daemon) Balance(ctx context.Context, wallet string) (Balance, error) {
	var r map[string]string
	if err := d.Call(ctx, "getbalance", map[string]any{"wallet": wallet}, &r); err != nil {
		return Balance{}, err
	}
	var b Balance
	for k, dst := range map[string]*int64{"confirmed": &b.Confirmed, "unconfirmed": &b.Unconfirmed, "unmatured": &b.Unmatured} {
		if s, ok := r[k]; ok {
			v, err := ParseBTC(s)
			if err != nil {
				return Balance{}, fmt.Errorf("electrumwallet: getbalance %s: %w", k, err)
			}
			*dst = v
		}
	}
	return b, nil
}

// Tx is one entry of the wallet's on-chain history.
type Tx struct {
	Txid          string
	Height        int32 // 0 or below: unconfirmed
	Confirmations int
	Timestamp     int64
	// Value is the tx's effect on the wallet, Balance the wallet's balance
	// after it, in satoshis.
	Value, Balance int64
	Fee            int64 // satoshis, when Electrum knows it
}

// History returns onchain_history, oldest first.
func (d *Daemon) History(ctx context.Context, wallet string) ([]Tx, error) {
	var r struct {
		Transactions []struct {
			Txid          string          `json:"txid"`
			Height        int32           `json:"height"`
			Confirmations int             `json:"confirmations"`
			Timestamp     *int64          `json:"timestamp"`
			BcValue       json.RawMessage `json:"bc_value"`
			BcBalance     json.RawMessage `json:"bc_balance"`
			FeeSat        *int64          `json:"fee_sat"`
		} `json:"transactions"`
	}
	if err := d.Call(ctx, "onchain_history", map[string]any{"wallet": wallet}, &r); err != nil {
		return nil, err
	}
	out := make([]Tx, 0, len(r.Transactions))
	for _, t := range r.Transactions {
		v, err := rawBTC(t.BcValue)
		if err != nil {
			return nil, fmt.Errorf("electrumwallet: history %s bc_value: %w", t.Txid, err)
		}
		bal, err := rawBTC(t.BcBalance)
		if err != nil {
			return nil, fmt.Errorf("electrumwallet: history %s bc_balance: %w", t.Txid, err)
		}
		tx := Tx{Txid: t.Txid, Height: t.Height, Confirmations: t.Confirmations, Value: v, Balance: bal}
		if t.Timestamp != nil {
			tx.Timestamp = *t.Timestamp
		}
		if t.FeeSat != nil {
			tx.Fee = *t.FeeSat
		}
		out = append(out, tx)
	}
	return out, nil
}

// Addresses returns the wallet's receiving (change false) or change
// addresses in derivation order.
func (d *Daemon) Addresses(ctx context.Context, wallet string, change bool) ([]string, error) {
	var r []string
	p := map[string]any{"wallet": wallet, "receiving": !change, "change": change}
	err := d.Call(ctx, "listaddresses", p, &r)
	return r, err
}

// Pay signs a payment of sats to address with an absolute fee (regtest
// nodes have no fee estimates), broadcasts it through the wallet's server
// and returns its txid and raw hex.
func (d *Daemon) Pay(ctx context.Context, wallet, address string, sats, feeSats int64) (txid, raw string, err error) {
	p := map[string]any{"wallet": wallet, "destination": address, "amount": FormatBTC(sats), "fee": FormatBTC(feeSats)}
	if err := d.Call(ctx, "payto", p, &raw); err != nil {
		return "", "", err
	}
	if err := d.Call(ctx, "broadcast", map[string]any{"tx": raw}, &txid); err != nil {
		return "", raw, err
	}
	return txid, raw, nil
}

// rawBTC parses a BTC amount that Electrum encodes as a string or number.
func rawBTC(raw json.RawMessage) (int64, error) {
	s := strings.Trim(string(raw), `"`)
	if s == "null" || s == "" {
		return 0, nil
	}
	return ParseBTC(s)
}

// ParseBTC parses a decimal BTC amount ("-0.0001", "1.5", "3") exactly
// into satoshis.
func ParseBTC(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	t := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" {
		whole = "0"
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 8 {
		return 0, fmt.Errorf("amount %q has more than 8 decimals", s)
	}
	frac += strings.Repeat("0", 8-len(frac))
	w, err := strconv.ParseUint(whole, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	f, err := strconv.ParseUint(frac, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	v := int64(w)*100_000_000 + int64(f)
	if neg {
		v = -v
	}
	return v, nil
}

// FormatBTC formats satoshis as a decimal BTC amount.
func FormatBTC(sats int64) string {
	sign := ""
	if sats < 0 {
		sign, sats = "-", -sats
	}
	return fmt.Sprintf("%s%d.%08d", sign, sats/100_000_000, sats%100_000_000)
}
