package db

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// An operator's fix is laid over the contracts row on every read, outlives
// a disconnect that deletes the row and the connect that writes it again,
// and stays out of dump comparisons.
func TestContractFixSurvivesReorg(t *testing.T) {
	chain := newEthSynth(3)
	for range 20 {
		chain.next("")
	}
	x := newEthTestIndex(t, 30, chain.blocks)
	nft := bchain.EthAddress{0xc0, 2}.AddrDesc()
	before, err := ReadContractInfo(x.db, nft)
	if err != nil || before == nil || before.Fixed {
		t.Fatalf("before the fix: %+v, %v", before, err)
	}
	never := bchain.EthAddress{0xee, 0xee}.AddrDesc()
	if err := x.db.WriteContractFixes([]bchain.AddrDesc{nft, never}, []ContractFix{
		{Name: "Fixed NFT", Symbol: "FIX", Decimals: 0, Standard: bchain.TokenERC1155},
		{Name: "Unseen", Symbol: "UNS", Decimals: 6},
	}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := ReadContractInfo(x.db, nft)
		if err != nil || got == nil || !got.Fixed || got.Name != "Fixed NFT" || got.Symbol != "FIX" || got.Standard() != bchain.TokenERC1155 {
			t.Fatalf("%s: %+v, %v", when, got, err)
		}
		row, err := readContractRow(x.db, nft)
		if row != nil && (row.Name == "Fixed NFT" || row.Fixed) {
			t.Fatalf("%s: the fix leaked into the sync's row %+v", when, row)
		}
		if err != nil {
			t.Fatal(err)
		}
		u, err := ReadContractInfo(x.db, never)
		if err != nil || u == nil || u.Name != "Unseen" || u.Decimals != 6 || u.Standard() != bchain.TokenUnknown || len(u.Events) != 0 {
			t.Fatalf("%s: fix of an unseen contract %+v, %v", when, u, err)
		}
	}
	check("fixed")
	// Take every block away (the contracts rows go), then connect them again.
	for range 20 {
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	if row, _ := readContractRow(x.db, nft); row != nil {
		t.Fatalf("the disconnects left the row %+v", row)
	}
	check("all blocks disconnected")
	for _, b := range chain.blocks {
		connectEth(t, x, b)
	}
	check("connected again")
	fresh := newEthTestIndex(t, 30, chain.blocks)
	diffs, err := Diff(x.db, fresh.db, ColumnFamilies(bchain.ChainEthereumType), 5)
	if err != nil || len(diffs) > 0 {
		t.Fatalf("fixes are in the dump comparison: %v %v", diffs, err)
	}
	// Deleting the fix returns the node's metadata.
	f, err := x.db.DeleteContractFix(nft)
	if err != nil || f == nil || f.Name != "Fixed NFT" {
		t.Fatalf("delete: %+v, %v", f, err)
	}
	if f, err := x.db.DeleteContractFix(nft); f != nil || err != nil {
		t.Fatalf("second delete: %+v, %v", f, err)
	}
	after, err := ReadContractInfo(x.db, nft)
	if err != nil || after == nil || after.Fixed || after.Name != before.Name || after.Standard() != before.Standard() {
		t.Fatalf("after the delete %+v, want %+v (%v)", after, before, err)
	}
}

// Pages of ListContracts cover rows and fixes once each, in address order.
func TestListContractsPages(t *testing.T) {
	chain := newEthSynth(5)
	for range 30 {
		chain.next("")
	}
	x := newEthTestIndex(t, 10, chain.blocks)
	var fixed []bchain.AddrDesc
	var fixes []ContractFix
	for i := range 7 { // some between the rows, some after them all
		fixed = append(fixed, bchain.EthAddress{byte(0x10 + 0x30*i), 9}.AddrDesc())
		fixes = append(fixes, ContractFix{Name: fmt.Sprint("fix ", i)})
	}
	fixed = append(fixed, bchain.EthAddress{0xc0, 2}.AddrDesc()) // has a row too
	fixes = append(fixes, ContractFix{Name: "row and fix"})
	if err := x.db.WriteContractFixes(fixed, fixes); err != nil {
		t.Fatal(err)
	}
	all, next, err := ListContracts(x.db, nil, 100000)
	if err != nil || next != nil || len(all) < 10 {
		t.Fatalf("whole list: %d, next %x, %v", len(all), next, err)
	}
	for _, limit := range []int{1, 2, 3, 7} {
		var got []ListedContract
		var from bchain.AddrDesc
		for pages := 0; ; pages++ {
			page, nx, err := ListContracts(x.db, from, limit)
			if err != nil || len(page) > limit || pages > len(all) {
				t.Fatalf("limit %d: page %d of %d, %v", limit, pages, len(page), err)
			}
			got = append(got, page...)
			if nx == nil {
				break
			}
			from = nx
		}
		if len(got) != len(all) {
			t.Fatalf("limit %d: %d contracts, want %d", limit, len(got), len(all))
		}
		for i := range got {
			if !bytes.Equal(got[i].Contract, all[i].Contract) || got[i].Info.Name != all[i].Info.Name || i > 0 && bytes.Compare(got[i-1].Contract, got[i].Contract) >= 0 {
				t.Fatalf("limit %d: item %d %x", limit, i, got[i].Contract)
			}
		}
	}
	n := 0
	for _, c := range all {
		if c.Info.Fixed {
			n++
		}
		if bytes.Equal(c.Contract, fixed[7]) && c.Info.Name != "row and fix" {
			t.Errorf("listed %+v without its fix", c.Info)
		}
	}
	if n != len(fixed) {
		t.Errorf("%d fixed contracts listed, want %d", n, len(fixed))
	}
	if err := x.db.WriteContractFixes([]bchain.AddrDesc{fixed[0]}, []ContractFix{{Name: strings.Repeat("x", 300)}}); !errors.Is(err, ErrBadContractFix) {
		t.Errorf("an oversize name: %v", err)
	}
}

func FuzzUnpackContractFix(f *testing.F) {
	f.Add(packContractFix(&ContractFix{Name: "A", Symbol: "B", Decimals: 18, Standard: bchain.TokenERC20}))
	f.Add([]byte{0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := unpackContractFix(b)
		if err == nil && !bytes.Equal(packContractFix(c), b) {
			t.Fatalf("%x decodes to %+v, which packs differently", b, c)
		}
	})
}

// The trace-error list names each failed block with its hash and error.
func TestReadTraceErrors(t *testing.T) {
	chain := newEthSynth(11)
	for range 12 {
		chain.next("")
	}
	var blocks []*bchain.Block
	for _, b := range chain.blocks {
		if b.Height == 4 || b.Height == 9 {
			b = degrade(b)
		}
		blocks = append(blocks, b)
	}
	x := newEthTestIndex(t, 5, blocks)
	got, err := ReadTraceErrors(x.db)
	if err != nil || len(got) != 2 || got[0].Height != 4 || got[1].Height != 9 || got[1].Hash != chain.blocks[9].Hash || !strings.Contains(got[0].Message, "timeout") {
		t.Fatalf("%+v, %v", got, err)
	}
}
