package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/meshcheck"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// TestE2EMeshOffline runs the program with -mesh-offline and no node: the
// configured RPC address is a listener that counts connections and must
// see none, and the data directory must never be created. The offline
// Construction endpoints build a payment from a test key's coin, a signer
// outside signs it, and the combined tx verifies with the script engine;
// every answer validates against the specification, and the online
// endpoints answer the "unavailable offline" error.
func TestE2EMeshOffline(t *testing.T) {
	nodeLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer nodeLn.Close()
	var contacted atomic.Int32
	go func() {
		for {
			c, err := nodeLn.Accept()
			if err != nil {
				return
			}
			contacted.Add(1)
			c.Close()
		}
	}()
	cfg := writeConfig(t, &regtest.Node{RPCURL: "http://" + nodeLn.Addr().String(), RPCUser: "u", RPCPass: "p"}, nil)
	dataDir := filepath.Join(t.TempDir(), "data")
	addr := freePort(t)
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(os.Args[0], "-blockchaincfg="+cfg, "-datadir="+dataDir, "-mesh="+addr, "-mesh-offline",
		"-public=none", "-internal=none")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })

	k, err := meshcheck.New()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	c := &meshcheck.Client{Checker: k, Network: map[string]any{"blockchain": "Regtest", "network": "regtest"},
		Post: func(path string, body any) (int, []byte, error) { return meshPost(base+path, "", body) }}
	var opts struct {
		Allow struct {
			Errors []meshcheck.AnswerError `json:"errors"`
		} `json:"allow"`
	}
	for deadline := time.Now().Add(waitFor); ; time.Sleep(20 * time.Millisecond) {
		if err = c.Call("/network/options", nil, &opts); err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the program exited: %v\n%s", cmd.ProcessState, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the offline listener never answered: %v\n%s", err, logs)
		}
	}
	offline := 0
	for _, e := range opts.Allow.Errors {
		if e.Message == "Endpoint unavailable offline" {
			offline = e.Code
		}
	}
	if offline == 0 {
		t.Fatalf("/network/options lists no offline error: %+v", opts.Allow.Errors)
	}
	for _, p := range []string{"/network/status", "/block", "/account/balance", "/construction/metadata", "/construction/submit", "/events/blocks", "/call"} {
		err := c.Call(p, map[string]any{}, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != offline || ae.Retriable {
			t.Errorf("%s offline: %v, want error %d", p, err, offline)
		}
	}

	seed := sha256.Sum256([]byte("e2e mesh offline"))
	key, _ := btcec.PrivKeyFromBytes(seed[:])
	from := meshDerive(t, c, key, nil)
	want, _ := address.NewAddressWitnessPubKeyHash(address.Hash160(key.PubKey().SerializeCompressed()), &chaincfg.RegressionNetParams)
	if from != want.EncodeAddress() {
		t.Fatalf("derive: %s, want %s", from, want.EncodeAddress())
	}
	// The coin is any outpoint: offline, nothing is looked up.
	const funding, paid, fee = 2_000_000, 1_500_000, 1_000
	coin := hex.EncodeToString(seed[:]) + ":1"
	cur := map[string]any{"symbol": "rBTC", "decimals": 8}
	ops := []any{meshcheck.IntentOp(0, "INPUT", from, -funding, coin, cur),
		meshcheck.IntentOp(1, "OUTPUT", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", paid, "", cur),
		meshcheck.IntentOp(2, "OUTPUT", from, funding-paid-fee, "", cur)}
	var pre struct {
		Options map[string]any `json:"options"`
	}
	if err := c.Call("/construction/preprocess", map[string]any{"operations": ops}, &pre); err != nil {
		t.Fatal(err)
	}
	var pl struct {
		UnsignedTransaction string           `json:"unsigned_transaction"`
		Payloads            []map[string]any `json:"payloads"`
	}
	if err := c.Call("/construction/payloads", map[string]any{"operations": ops}, &pl); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Operations []json.RawMessage `json:"operations"`
	}
	if err := c.Call("/construction/parse", map[string]any{"signed": false, "transaction": pl.UnsignedTransaction}, &parsed); err != nil || len(parsed.Operations) != 3 {
		t.Fatalf("parse unsigned: %v %d operations", err, len(parsed.Operations))
	}
	sig, err := meshcheck.Sign(key, pl.Payloads[0])
	if err != nil {
		t.Fatal(err)
	}
	var comb struct {
		SignedTransaction string `json:"signed_transaction"`
	}
	if err := c.Call("/construction/combine", map[string]any{"unsigned_transaction": pl.UnsignedTransaction, "signatures": []any{sig}}, &comb); err != nil {
		t.Fatal(err)
	}
	if err := c.Call("/construction/parse", map[string]any{"signed": true, "transaction": comb.SignedTransaction}, &parsed); err != nil {
		t.Fatal(err)
	}
	var hashed struct {
		TransactionIdentifier struct {
			Hash string `json:"hash"`
		} `json:"transaction_identifier"`
	}
	if err := c.Call("/construction/hash", map[string]any{"signed_transaction": comb.SignedTransaction}, &hashed); err != nil {
		t.Fatal(err)
	}
	// The signed tx spends the coin validly: the script engine runs it.
	tx, err := meshcheck.Tx(comb.SignedTransaction)
	if err != nil {
		t.Fatal(err)
	}
	if tx.TxHash().String() != hashed.TransactionIdentifier.Hash || len(tx.TxIn) != 1 || tx.TxIn[0].PreviousOutPoint.String() != coin {
		t.Fatalf("hash %s, tx %s spending %v", hashed.TransactionIdentifier.Hash, tx.TxHash(), tx.TxIn)
	}
	prev, _ := txscript.PayToAddrScript(want)
	fetcher := txscript.NewCannedPrevOutputFetcher(prev, funding)
	vm, err := txscript.NewEngine(prev, tx, 0, txscript.StandardVerifyFlags, nil, txscript.NewTxSigHashes(tx, fetcher), funding, fetcher)
	if err != nil {
		t.Fatal(err)
	}
	if err := vm.Execute(); err != nil {
		t.Errorf("the combined tx does not verify: %v", err)
	}
	if n := contacted.Load(); n != 0 {
		t.Errorf("the offline program contacted the node %d times", n)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the offline program touched its data directory: %v", err)
	}
	// -mesh-offline without a Mesh listener is a configuration error.
	bad := exec.Command(os.Args[0], "-blockchaincfg="+cfg, "-datadir="+dataDir, "-mesh-offline", "-public=none", "-internal=none")
	bad.Env = append(os.Environ(), childEnv+"=1")
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "-mesh-offline needs -mesh") {
		t.Errorf("-mesh-offline without -mesh: %v\n%s", err, out)
	}
}
