package api_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// regtestDifficulty is what Bitcoin Core reports for regtest's bits
// 207fffff.
const regtestDifficulty = "4.656542373906925e-10"

// wantBlock checks a block answer's header and the page of its txs.
func wantBlock(t *testing.T, f *apitest.Fixture, b *api.Block, h int, txids []string) {
	t.Helper()
	hdr := f.Block(h).Header
	want := api.BlockInfo{
		Hash: f.BlockHash(h), Height: uint32(h), Confirmations: f.TipHeight() - h + 1, Size: len(f.Raw[h]),
		Time: hdr.Timestamp.Unix(), Version: jsonNumber(int64(hdr.Version)), MerkleRoot: hdr.MerkleRoot.String(),
		Nonce: strconv.FormatUint(uint64(hdr.Nonce), 10), Bits: fmt.Sprintf("%08x", hdr.Bits), Difficulty: regtestDifficulty,
	}
	if h > 0 {
		want.Prev = f.BlockHash(h - 1)
	}
	if h < f.TipHeight() {
		want.Next = f.BlockHash(h + 1)
	}
	if b.BlockInfo != want || b.TxCount != len(f.Block(h).Transactions) {
		t.Fatalf("block %d: %+v (%d txs)\nwant %+v (%d txs)", h, b.BlockInfo, b.TxCount, want, len(f.Block(h).Transactions))
	}
	var got []string
	for _, tx := range b.Txs {
		got = append(got, tx.Txid)
		if tx.BlockHeight != int64(h) || tx.Hex != "" { // block pages leave the hex out
			t.Errorf("block %d tx %s: height %d, hex %d chars", h, tx.Txid, tx.BlockHeight, len(tx.Hex))
		}
	}
	if !slices.Equal(got, txids) {
		t.Fatalf("block %d: txs %v\nwant %v", h, got, txids)
	}
}

func blockTxids(f *apitest.Fixture, h int) []string {
	var out []string
	for _, tx := range f.Block(h).Transactions {
		out = append(out, tx.TxHash().String())
	}
	return out
}

// Blocks by height and by hash, genesis and tip included.
func TestBlockByHeightAndHash(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	for _, h := range []int{0, 1, 100, 111, 112, 113, f.TipHeight()} {
		for _, id := range []string{strconv.Itoa(h), f.BlockHash(h), strings.ToUpper(f.BlockHash(h))} {
			b, err := svc.Block(ctx, id, 0, 0)
			if err != nil {
				t.Fatalf("block %s: %v", id, err)
			}
			wantBlock(t, f, b, h, blockTxids(f, h))
			wantPaging(t, id, b.Paging, 1, 1, 1000)
		}
	}
}

// A block's txs are paged like an address's: 1000 a page by default, at
// most 10,000 (the websocket's getBlock may ask up to that, as Blockbook's).
func TestBlockTxPaging(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	h := 112
	all := blockTxids(f, h)
	if len(all) < 5 {
		t.Fatalf("fixture: block %d has %d txs", h, len(all))
	}
	for _, tc := range []struct{ page, size, wantPage, wantSize int }{
		{1, 2, 1, 2}, {2, 2, 2, 2}, {0, 3, 1, 3}, {99, 2, pages(len(all), 2), 2}, {1, 1, 1, 1}, {2, 5000, 1, 5000}, {1, 0, 1, 1000}, {1, -3, 1, 1000}, {1, 20000, 1, 10000},
	} {
		b, err := svc.Block(context.Background(), strconv.Itoa(h), tc.page, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		wantBlock(t, f, b, h, pageOf(all, tc.wantPage, tc.wantSize))
		wantPaging(t, fmt.Sprintf("page %d of %d", tc.page, tc.size), b.Paging, tc.wantPage, pages(len(all), tc.wantSize), tc.wantSize)
	}
}

func TestBlockErrors(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	beyond := strconv.Itoa(f.TipHeight() + 1)
	for _, tc := range []struct{ id, msg string }{
		{beyond, "Block not found"},
		{"4294967295", "Block not found"},
		{strings.Repeat("ab", 32), "Block not found"},
		{"99999999999", "Invalid block height or hash"},
		{"-1", "Invalid block height or hash"},
		{"", "Invalid block height or hash"},
		{"abc", "Invalid block height or hash"},
		{f.BlockHash(1)[:63], "Invalid block height or hash"},
	} {
		_, err := svc.Block(ctx, tc.id, 0, 0)
		wantUserError(t, err, tc.msg)
		if !strings.HasPrefix(tc.msg, "Invalid") && !api.IsNotFound(err) {
			t.Errorf("block %q: %v is not a not-found error", tc.id, err)
		}
		_, err = svc.RawBlock(ctx, tc.id)
		wantUserError(t, err, tc.msg)
		_, err = svc.FeeStats(ctx, tc.id)
		wantUserError(t, err, tc.msg)
	}
}

// block-index, the websocket's getBlockHash, rawblock and the explorer's
// block list.
func TestBlockIndexRawAndList(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	tip := f.TipHeight()
	for _, h := range []int{0, 57, tip} {
		bi, err := svc.BlockIndex(ctx, strconv.Itoa(h))
		if err != nil || bi.BlockHash != f.BlockHash(h) {
			t.Fatalf("block-index %d: %v %v", h, bi, err)
		}
		hash, err := svc.BlockHash(ctx, h)
		if err != nil || hash != f.BlockHash(h) {
			t.Fatalf("getBlockHash %d: %s %v", h, hash, err)
		}
		raw, err := svc.RawBlock(ctx, f.BlockHash(h))
		if err != nil || raw.Hex != hex.EncodeToString(f.Raw[h]) {
			t.Fatalf("rawblock %d: %v", h, err)
		}
	}
	// Beyond the tip (even beyond uint32) is an empty hash and an empty
	// height the tip's, as Blockbook answers.
	for h, want := range map[string]string{strconv.Itoa(tip + 1): "", "4294967296": "", "": f.BlockHash(tip)} {
		bi, err := svc.BlockIndex(ctx, h)
		if err != nil || bi.BlockHash != want {
			t.Fatalf("block-index %q: %v %v, want %q", h, bi, err, want)
		}
	}
	for _, bad := range []string{"-1", "x", "+1"} {
		_, err := svc.BlockIndex(ctx, bad)
		wantUserError(t, err, "Invalid block height")
	}
	// Like Blockbook, getBlockHash answers an empty hash beyond the tip.
	if hash, err := svc.BlockHash(ctx, tip+1); err != nil || hash != "" {
		t.Fatalf("getBlockHash beyond the tip: %q %v", hash, err)
	}
	_, err := svc.BlockHash(ctx, -1)
	wantUserError(t, err, "Block height -1 is out of range")

	list, err := svc.Blocks(ctx, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	wantPaging(t, "blocks", list.Paging, 2, pages(tip+1, 5), 5)
	for i, b := range list.Blocks {
		h := tip - 5 - i
		want := api.BlockSummary{Height: uint32(h), Hash: f.BlockHash(h), Time: f.Block(h).Header.Timestamp.Unix(),
			TxCount: len(f.Block(h).Transactions), Size: len(f.Raw[h])}
		if b != want {
			t.Fatalf("blocks[%d] = %+v, want %+v", i, b, want)
		}
	}
	if last, err := svc.Blocks(ctx, 1000, 5); err != nil || last.Page != pages(tip+1, 5) || last.Blocks[len(last.Blocks)-1].Height != 0 {
		t.Fatalf("past the last page of blocks: %+v %v", last, err)
	}
}

// feestats: the fees of a block's non-coinbase txs per 1000 vbytes.
func TestBlockFeeStats(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	for _, h := range []int{1, 111, 112, f.TipHeight()} {
		var rates []int64
		var total, vsize int64
		for _, tx := range f.Block(h).Transactions[1:] {
			fee := f.Ledger.Txs[tx.TxHash().String()].Fee
			vs := int64((tx.SerializeSizeStripped()*3 + tx.SerializeSize() + 3) / 4)
			total += fee
			vsize += vs
			rates = append(rates, fee*1000/vs)
		}
		fs, err := svc.FeeStats(context.Background(), strconv.Itoa(h))
		if err != nil {
			t.Fatal(err)
		}
		wantAmount(t, "total fees", fs.TotalFeesSat, total)
		if fs.TxCount != len(rates) {
			t.Fatalf("block %d: %d txs, want %d", h, fs.TxCount, len(rates))
		}
		if len(rates) == 0 {
			if fs.AverageFeePerKb != 0 || fs.DecilesFeePerKb != [11]int64{} {
				t.Fatalf("block %d without fees: %+v", h, fs)
			}
			continue
		}
		sort.Slice(rates, func(i, j int) bool { return rates[i] < rates[j] })
		if fs.AverageFeePerKb != total*1000/vsize || fs.DecilesFeePerKb[0] != rates[0] || fs.DecilesFeePerKb[10] != rates[len(rates)-1] ||
			!slices.IsSorted(fs.DecilesFeePerKb[:]) {
			t.Fatalf("block %d: %+v, rates %v", h, fs, rates)
		}
	}
}

// The explorer's search names blocks, txs, addresses and accounts.
func TestSearch(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	txid := f.Block(111).Transactions[1].TxHash().String()
	for _, tc := range []struct{ q, kind, id string }{
		{"57", api.SearchBlock, "57"},
		{" " + f.BlockHash(57) + " ", api.SearchBlock, f.BlockHash(57)},
		{strings.ToUpper(txid), api.SearchTx, txid},
		{f.PendingPayment.TxHash().String(), "", ""}, // pending, and this fixture has no mempool
		{strings.ToUpper(f.DemoAddress), api.SearchAddress, f.DemoAddress},
		{f.UnusedAddress, api.SearchAddress, f.UnusedAddress},
		{f.Accounts[2].Xpub(), api.SearchXpub, f.Accounts[2].Xpub()},
		{strconv.Itoa(f.TipHeight() + 1), "", ""},
		{strings.Repeat("ab", 32), "", ""},
		{"nothing-like-this", "", ""},
	} {
		r, err := svc.Search(ctx, tc.q)
		if tc.kind == "" {
			wantUserError(t, err, "No block, transaction, address or xpub matches")
			if !api.IsNotFound(err) {
				t.Errorf("search %q: %v is not a not-found error", tc.q, err)
			}
			continue
		}
		if err != nil || *r != (api.SearchResult{Kind: tc.kind, ID: tc.id}) {
			t.Errorf("search %q: %+v %v", tc.q, r, err)
		}
	}
	_, err := svc.Search(ctx, "  ")
	wantUserError(t, err, "Enter a block height or hash")
}
