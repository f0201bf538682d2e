package dash

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// hash1028160 is the id dashd gives mainnet block 1028160 (recorded as the
// blockhash of its txs in Blockbook's Dash tests).
const hash1028160 = "000000000000002099caaf1a877911d99a5980ede9b981280eecb291afedf87b"

// dashdStandIn answers getblock <hash1028160> 0 with the recorded raw block
// in dashd's JSON-RPC form, as no dashd can run here; anything else is
// dashd's "Block not found" error.
func dashdStandIn(t *testing.T, raw []byte) *btctest.Node {
	return btctest.NewNode(t, func(method string, params []any) (any, *btctest.RPCError) {
		if method == "getblock" && len(params) == 2 && params[0] == hash1028160 {
			return hex.EncodeToString(raw), nil
		}
		return nil, &btctest.RPCError{Code: -5, Message: "Block not found"}
	})
}

func TestBackendBlockIDFromNode(t *testing.T) {
	srv := dashdStandIn(t, btctest.ReadHex(t, "block_1028160.hex"))
	b, err := btctest.Backend(t, map[string]any{"coin_name": "Dash", "rpc_url": srv.URL, "block_notifications": "none"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Params.Shortcut != "DASH" || b.Params.Slip44 != 5 || b.Params.Genesis.String() != MainNetParams.GenesisHash.String() {
		t.Errorf("params %+v", b.Params)
	}
	hash, _ := bchain.ParseHash(hash1028160)
	blk, err := b.Chain.Block(context.Background(), hash, 1028160)
	if err != nil {
		t.Fatal(err)
	}
	if blk.Hash != hash || blk.Height != 1028160 || len(blk.Txs) != 5 || blk.Txs[0].Specific == nil {
		t.Errorf("block %s height %d txs %d", blk.Hash, blk.Height, len(blk.Txs))
	}
	other, _ := bchain.ParseHash("00000000000000000000000000000000000000000000000000000000000000ff")
	if _, err := b.Chain.Block(context.Background(), other, 1); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Errorf("unknown block: %v", err)
	}
}

func TestBackendRefusesP2P(t *testing.T) {
	_, err := btctest.Backend(t, map[string]any{"coin_name": "Dash Testnet", "rpc_url": "http://127.0.0.1:1", "p2p_address": "127.0.0.1:19999"})
	if !errors.Is(err, bchain.ErrConfig) {
		t.Fatalf("p2p_address for Dash: %v", err)
	}
}

func TestBackendAccountsP2PKHOnly(t *testing.T) {
	b, err := btctest.Backend(t, map[string]any{"coin_name": "Dash", "rpc_url": "http://127.0.0.1:1", "xpub_magic": 50221772})
	if err != nil {
		t.Fatal(err)
	}
	master, err := hdkeychain.NewMaster(make([]byte, 32), &MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := master.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	key := pub.String()
	if key[:4] != "drkp" {
		t.Fatalf("Dash extended key %s", key)
	}
	d, err := b.Xpub.ParseXpub(key)
	if err != nil || d.ScriptType != bchain.XpubP2PKH {
		t.Fatalf("drkp key: %+v %v", d, err)
	}
	if _, err := b.Xpub.ParseXpub("wpkh(" + key + "/0/*)"); !errors.Is(err, bchain.ErrInvalidXpub) {
		t.Errorf("wpkh descriptor: %v", err)
	}
}
