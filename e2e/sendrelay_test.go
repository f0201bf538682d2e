package e2e

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// TestEthPrivateSend runs private sending end to end: the server's public
// node and a second geth as the relay share a genesis but are not peered;
// only the relay seals, and the public node gets its blocks by import.
// With _ALTERNATIVE_SENDTX_URLS, _ONLY and _FETCH_MEMPOOL_TX set,
// @trezor/blockchain-link sends through the relay (tools/js/trezor-sendrelay.mjs).
func TestEthPrivateSend(t *testing.T) {
	node := trezorPrereqs(t)
	pub := startDevNode(t, gethdev.Options{})
	rel := startDevNode(t, gethdev.Options{})
	ctx := context.Background()
	signer := types.LatestSignerForChainID(rel.ChainID)
	other, _ := crypto.ToECDSA(crypto.Keccak256([]byte("sendrelay direct sender")))
	otherAddr := crypto.PubkeyToAddress(other.PublicKey)
	sign := func(k *ecdsa.PrivateKey, d types.TxData) *types.Transaction {
		tx, err := types.SignNewTx(k, signer, d)
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	payee := common.HexToAddress("0x00000000000000000000000000000000005e4d01")
	pay := func(nonce uint64, gasPrice, value int64) types.TxData {
		return &types.LegacyTx{Nonce: nonce, GasPrice: big.NewInt(gasPrice), Gas: 21000, To: &payee, Value: big.NewInt(value)}
	}
	// Block 1 (gethdev's first is empty), block 2 funds the direct sender.
	if _, err := rel.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := rel.SendTx(sign(rel.DevKey, &types.LegacyTx{Nonce: 0, GasPrice: big.NewInt(2e9), Gas: 21000, To: &otherAddr, Value: big.NewInt(1e18)})); err != nil {
		t.Fatal(err)
	}
	if _, err := rel.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := pub.ImportBlocks(rel); err != nil {
		t.Fatal(err)
	}

	raw, _ := json.Marshal(map[string]any{"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": pub.HTTPURL,
		"rpc_url_ws": pub.WSURL, "rpc_timeout": 20, "block_addresses_to_keep": 100, "eip1559Fees": true})
	cfgPath := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RETH_ALTERNATIVE_SENDTX_URLS", rel.HTTPURL)
	t.Setenv("RETH_ALTERNATIVE_SENDTX_ONLY", "true")
	t.Setenv("RETH_ALTERNATIVE_FETCH_MEMPOOL_TX", "TRUE")
	e := &ethE2E{dev: pub, inst: startInProcess(t, cfgPath, t.TempDir(), nil)}
	e.waitHead(t)

	private := sign(rel.DevKey, pay(1, 2e9, 5))
	underpriced := sign(rel.DevKey, pay(1, 1e9, 6))
	direct := sign(other, pay(0, 2e9, 7))
	hexOf := func(tx *types.Transaction) string { b, _ := tx.MarshalBinary(); return hexutil.Encode(b) }
	u, _ := url.Parse(rel.HTTPURL)
	facts := map[string]string{"sender": rel.DevAddr.Hex(), "nonceBefore": "1", "privateHex": hexOf(private), "privateTxid": private.Hash().Hex(),
		"underpricedHex": hexOf(underpriced), "directHex": hexOf(direct), "directTxid": direct.Hash().Hex(), "relayAddr": u.Host}
	factsPath := filepath.Join(t.TempDir(), "facts.json")
	fb, _ := json.Marshal(facts)
	if err := os.WriteFile(factsPath, fb, 0o644); err != nil {
		t.Fatal(err)
	}
	where := func(id string) string {
		h := common.HexToHash(id)
		_, _, errP := pub.Client().TransactionByHash(ctx, h)
		_, _, errR := rel.Client().TransactionByHash(ctx, h)
		switch {
		case errP == nil && errR == nil:
			return "both"
		case errR == nil:
			return "relay-only"
		case errP == nil:
			return "public-only"
		}
		return "none"
	}
	runClientScript(t, node, "../tools/js/trezor-sendrelay.mjs", e.inst.base, factsPath, e.inst.logs, func(line string) (string, bool) {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "where":
			return where(f[1]), true
		case len(f) > 0 && f[0] == "need-block":
			hash, err := rel.Commit()
			if err == nil {
				err = pub.ImportBlocks(rel)
			}
			if err != nil {
				return "error " + err.Error(), true
			}
			e.waitHead(t)
			h, _ := rel.Head()
			return fmt.Sprintf("block %d %x", h, hash[:]), true
		}
		return "", false
	})
	var tx api.Tx
	e.get(t, "/api/v2/tx/"+private.Hash().Hex(), &tx)
	if tx.BlockHeight != 3 {
		t.Errorf("the private tx at height %d, want 3 (the relay's block)", tx.BlockHeight)
	}

	// The answers of a private send, websocket and REST, as samples for
	// the wallet client's typings (testdata/eth).
	ws := newWS(t, e.inst.base)
	viaWS, viaREST := sign(rel.DevKey, pay(2, 2e9, 8)), sign(rel.DevKey, pay(3, 2e9, 9))
	var pushed map[string]any
	ws.ok("sendTransaction", map[string]any{"hex": hexOf(viaWS)}, &pushed)
	goldenShape(t, "eth", "TestEthPrivateSend", "ws-sendTransaction-private", pushed)
	var sent map[string]any
	e.get(t, "/api/v2/sendtx/"+hexOf(viaREST), &sent)
	goldenShape(t, "eth", "TestEthPrivateSend", "sendtx-private", sent)
	for _, x := range []*types.Transaction{viaWS, viaREST} {
		if w := where(x.Hash().Hex()); w != "relay-only" {
			t.Errorf("%s sent through the server is %s, want relay-only", x.Hash().Hex(), w)
		}
	}
	if pushed["result"] != viaWS.Hash().Hex() || sent["result"] != viaREST.Hash().Hex() {
		t.Errorf("the answers name %v and %v, want the txids %s and %s", pushed["result"], sent["result"], viaWS.Hash().Hex(), viaREST.Hash().Hex())
	}
}
