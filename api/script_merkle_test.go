package api_test

import (
	"bytes"
	"compress/bzip2"
	"crypto/sha256"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// foldBranch recomputes a merkle root from a leaf, its position and its
// branch the way a verifying client does (Electrum's get_merkle), in
// internal byte order, and returns it in display order.
func foldBranch(leaf bchain.Hash, pos int, branch []bchain.Hash) bchain.Hash {
	rev := func(h bchain.Hash) []byte { b := bytes.Clone(h[:]); slicesReverse(b); return b }
	node := rev(leaf)
	for _, sib := range branch {
		l, r := node, rev(sib)
		if pos&1 == 1 {
			l, r = r, l
		}
		buf := slices.Concat(l, r)
		first := sha256.Sum256(buf)
		second := sha256.Sum256(first[:])
		node = second[:]
		pos >>= 1
	}
	slicesReverse(node)
	return bchain.Hash(node)
}

func slicesReverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}

// headerRoot reads the merkle root straight from a serialized header.
func headerRoot(raw []byte) bchain.Hash {
	var h bchain.Hash
	copy(h[:], raw[36:68])
	slicesReverse(h[:])
	return h
}

func checkBranches(t *testing.T, what string, txids []bchain.Hash, root bchain.Hash, positions []int) {
	t.Helper()
	depth := 0
	for n := len(txids); n > 1; n = (n + 1) / 2 {
		depth++
	}
	for _, pos := range positions {
		br := api.MerkleBranch(txids, pos)
		if len(br) != depth {
			t.Fatalf("%s pos %d: branch of %d, want %d levels", what, pos, len(br), depth)
		}
		if got := foldBranch(txids[pos], pos, br); got != root {
			t.Fatalf("%s pos %d: branch folds to %s, header says %s", what, pos, got, root)
		}
	}
	if got := api.MerkleRoot(txids); got != root {
		t.Fatalf("%s: MerkleRoot %s, header says %s", what, got, root)
	}
	if api.MerkleBranch(txids, -1) != nil || api.MerkleBranch(txids, len(txids)) != nil {
		t.Fatalf("%s: a position outside the block has a branch", what)
	}
}

// Real mainnet blocks (the btc parser's testdata): a sample of positions,
// the first, the last and their neighbours included.
func TestMerkleBranchMainnetBlocks(t *testing.T) {
	dir := filepath.Join("..", "bchain", "coins", "btc", "testdata", "mainnet")
	files, err := filepath.Glob(filepath.Join(dir, "block-*.blk.bz2"))
	if err != nil || len(files) < 2 {
		t.Fatalf("mainnet blocks: %v %v", files, err)
	}
	p := btc.NewParser(&chaincfg.MainNetParams)
	rng := rand.New(rand.NewSource(1))
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(bzip2.NewReader(f))
		_ = f.Close()
		if err != nil {
			t.Fatal(err)
		}
		blk, err := p.ParseBlock(raw)
		if err != nil {
			t.Fatal(err)
		}
		txids := make([]bchain.Hash, len(blk.Txs))
		for i := range blk.Txs {
			txids[i] = blk.Txs[i].Txid
		}
		n := len(txids)
		positions := []int{0, 1, n / 2, n - 2, n - 1}
		for range 40 {
			positions = append(positions, rng.Intn(n))
		}
		checkBranches(t, filepath.Base(name), txids, headerRoot(raw), positions)
	}
}

// Every block of the fixture (one to a few txs: odd levels everywhere),
// every position; BlockTxids and the stored headers give the input.
func TestMerkleBranchFixtureBlocks(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	q := newService(f).Capabilities().Scripts
	ctx := t.Context()
	single := 0
	for h, raw := range f.Raw {
		txids, err := q.BlockTxids(ctx, uint32(h))
		if err != nil {
			t.Fatal(err)
		}
		if len(txids) == 1 {
			single++
			if br := api.MerkleBranch(txids, 0); br == nil || len(br) != 0 {
				t.Fatalf("block %d of one tx: branch %v", h, br)
			}
		}
		all := make([]int, len(txids))
		for i := range all {
			all[i] = i
		}
		checkBranches(t, "fixture block", txids, headerRoot(raw), all)
	}
	if single == 0 {
		t.Error("no block of one tx in the fixture")
	}
}
