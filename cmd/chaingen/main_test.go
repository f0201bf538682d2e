package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

func TestGenerateAndSubmit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "a.blk"), filepath.Join(dir, "b.blk")}
	for _, f := range files {
		var out bytes.Buffer
		if err := run(ctx, []string{"-out", f, "-blocks", "125", "-txs", "300", "-seed", "cli"}, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "125 blocks") {
			t.Fatalf("unexpected output %q", out.String())
		}
	}
	a, _ := os.ReadFile(files[0])
	b, _ := os.ReadFile(files[1])
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("two runs with the same flags wrote different files")
	}

	n, err := regtest.Start(ctx, regtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	args := []string{"-submit", files[0], "-rpc", n.RPCURL, "-rpcuser", n.RPCUser, "-rpcpass", n.RPCPass}
	for range 2 { // the second run finds everything submitted and resumes at the tip
		if err := run(ctx, args, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	blocks, err := chaingen.ReadBlocks(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	h, hash, err := n.BestBlock(ctx)
	if err != nil || int(h) != len(blocks)-1 || hash != blocks[h].BlockHash().String() {
		t.Fatalf("node tip %d %s (%v), want the file's tip", h, hash, err)
	}

	if err := run(ctx, []string{"-out", files[0], "-submit", files[0]}, &bytes.Buffer{}); err == nil {
		t.Fatal("-out together with -submit accepted")
	}
}
