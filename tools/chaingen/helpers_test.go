package chaingen

import (
	"bytes"
	"context"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"github.com/openexplorer/blockbook/tools/regtest"
)

var params = &chaincfg.RegressionNetParams

var demo struct {
	once sync.Once
	g    *Generator
	err  error
}

// demoChain returns the shared default demo generator. Tests must not
// extend or spend from it; Fork it instead.
func demoChain(t *testing.T) *Generator {
	t.Helper()
	demo.once.Do(func() {
		demo.g = New(params, "chaingen-test")
		demo.err = demo.g.Demo(DefaultDemo())
	})
	if demo.err != nil {
		t.Fatal(demo.err)
	}
	return demo.g
}

func startNode(t *testing.T, o regtest.Options) *regtest.Node {
	t.Helper()
	o.Dir = t.TempDir()
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := regtest.Start(c, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Error(err)
		}
	})
	return n
}

func testCtx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func assertNodeTip(t *testing.T, n *regtest.Node, g *Generator) {
	t.Helper()
	h, hash, err := n.BestBlock(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	gh, ghash := g.Tip()
	if h != gh || hash != ghash.String() {
		t.Fatalf("node tip %d %s, generator tip %d %s", h, hash, gh, ghash)
	}
}

func decodeTx(t *testing.T, rawHex string) *wire.MsgTx {
	t.Helper()
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		t.Fatal(err)
	}
	tx := new(wire.MsgTx)
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	return tx
}

func vsize(tx *wire.MsgTx) int64 {
	return (int64(tx.SerializeSizeStripped())*3 + int64(tx.SerializeSize()) + 3) / 4
}
