package zec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// recorded is a node's answer as recorded in testdata.
func recorded(t *testing.T, name string) json.RawMessage {
	return json.RawMessage(btctest.ReadText(t, name))
}

// newTestBackend builds a Zcash backend on a stand-in zcashd or zebrad
// with the config keys of extra.
func newTestBackend(t *testing.T, node *btctest.Node, extra map[string]any) (*bchain.Backend, error) {
	t.Helper()
	doc := map[string]any{"coin_name": "Zcash", "rpc_url": node.URL, "rpc_user": "u", "rpc_pass": "p", "rpc_timeout": 5}
	maps.Copy(doc, extra)
	return btctest.Backend(t, doc)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestZebradChainInfo feeds zebrad's recorded getblockchaininfo and
// getnetworkinfo answers through the backend's ChainInfo.
func TestZebradChainInfo(t *testing.T) {
	s := btctest.NewNode(t, btctest.Recorded(map[string]json.RawMessage{
		"getblockchaininfo": recorded(t, "zebrad-getblockchaininfo.json"),
		"getnetworkinfo":    recorded(t, "zebrad-getnetworkinfo.json"),
	}))
	b, err := newTestBackend(t, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Notifier != nil || b.TxNotifier != nil {
		t.Errorf("without message_queue_binding the backend must poll, got %T %T", b.Notifier, b.TxNotifier)
	}
	info, err := b.Chain.ChainInfo(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := bchain.ChainInfo{
		Chain: "main", Blocks: 10, Headers: 10, BestBlockHash: "00074c46a4aa8172df8ae2ad1848a2e084e1b6989b7d9e6132adc938bf835b36",
		Difficulty: "1.0", Version: "100", Subversion: "RPC test", ProtocolVersion: "170160",
	}
	cons, _ := info.Consensus.(map[string]string)
	info.Consensus = nil
	if *info != want || cons["chaintip"] != "00000000" || cons["nextblock"] != "00000000" {
		t.Errorf("ChainInfo = %+v consensus %v", *info, cons)
	}

	// An older zebrad without getnetworkinfo: getinfo's answer instead.
	s = btctest.NewNode(t, btctest.Recorded(map[string]json.RawMessage{
		"getblockchaininfo": recorded(t, "zebrad-getblockchaininfo.json"),
		"getinfo":           recorded(t, "zebrad-getinfo.json"),
	}))
	b, err = newTestBackend(t, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err = b.Chain.ChainInfo(ctx(t))
	if err != nil || info.Version != "100" || info.ProtocolVersion != "170160" || info.Warnings != "" {
		t.Errorf("ChainInfo via getinfo = %+v, %v", info, err)
	}
}

// TestZcashEstimateFee: zcashd's estimatefee answer (ZEC per kB) when it
// has one; ZIP 317's conventional fee when it answers -1 or, like zebrad,
// has no estimatefee.
func TestZcashEstimateFee(t *testing.T) {
	if conventionalRate != 41494 {
		t.Errorf("conventional rate %d, want 10000 zat over 241 bytes = 41494 zat/kB", conventionalRate)
	}
	for _, tc := range []struct {
		name   string
		answer string
		want   int64
	}{
		{"zcashd", "0.00012345", 12345},
		{"zcashd without data", "-1", conventionalRate},
		{"zebrad", "", conventionalRate},
	} {
		answers := map[string]json.RawMessage{}
		if tc.answer != "" {
			answers["estimatefee"] = json.RawMessage(tc.answer)
		}
		s := btctest.NewNode(t, btctest.Recorded(answers))
		b, err := newTestBackend(t, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Fees.EstimateFee(ctx(t), 6, false)
		if err != nil || got != tc.want {
			t.Errorf("%s: EstimateFee = %d, %v; want %d", tc.name, got, err, tc.want)
		}
		if calls := s.Calls(); strings.Join(calls, ",") != "estimatefee" {
			t.Errorf("%s: calls %v", tc.name, calls)
		}
	}
}

func TestZcashRejectsP2PAddress(t *testing.T) {
	_, err := newTestBackend(t, btctest.NewNode(t, btctest.Recorded(nil)), map[string]any{"p2p_address": "127.0.0.1:8233"})
	if !errors.Is(err, bchain.ErrConfig) {
		t.Errorf("p2p_address: %v, want a config error", err)
	}
}

// TestZcashAccounts: a BIP44 account key of the Zcash backend derives
// P2PKH descriptors that render as the t1 addresses of its child keys.
func TestZcashAccounts(t *testing.T) {
	b, err := newTestBackend(t, btctest.NewNode(t, btctest.Recorded(nil)), map[string]any{"xpub_magic": 76067358})
	if err != nil {
		t.Fatal(err)
	}
	master, err := hdkeychain.NewMaster(bytes.Repeat([]byte{7}, 32), MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	acct := master
	for _, i := range []uint32{44, 133, 0} {
		if acct, err = acct.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := acct.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.Xpub.ParseXpub(pub.String())
	if err != nil {
		t.Fatal(err)
	}
	descs, err := b.Xpub.DeriveAddrDescs(d, 0, 0, 3)
	if err != nil || len(descs) != 3 {
		t.Fatalf("derive: %v %d", err, len(descs))
	}
	ext, _ := pub.Derive(0)
	for i, desc := range descs {
		child, _ := ext.Derive(uint32(i))
		key, _ := child.ECPubKey()
		want := encodeAddress(MainNetPrefixes.PubKeyHash, address.Hash160(key.SerializeCompressed()))
		addrs, ok, err := b.Addresses.AddressesFromAddrDesc(desc)
		if err != nil || !ok || len(addrs) != 1 || addrs[0] != want || !strings.HasPrefix(want, "t1") {
			t.Errorf("index %d: %v %v %v, want %s", i, addrs, ok, err, want)
		}
	}
}
