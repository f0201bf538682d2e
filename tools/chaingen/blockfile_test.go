package chaingen

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBlocksFileRoundTrip(t *testing.T) {
	g := demoChain(t)
	path := filepath.Join(t.TempDir(), "sub", "chain.bin")
	if err := WriteBlocksFile(path, g.Blocks()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	blocks, err := ReadBlocksFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != len(g.Blocks()) || blocks[len(blocks)-1].BlockHash() != g.Blocks()[g.Height()].BlockHash() {
		t.Fatalf("read %d blocks", len(blocks))
	}
	if _, err := ReadBlocksFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file accepted")
	}
}
