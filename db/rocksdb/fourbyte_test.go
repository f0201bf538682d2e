package rocksdb

import (
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/calldata"
	"github.com/openexplorer/blockbook/db"
)

func ethTestOptions(dir string) db.Options {
	return db.Options{Path: dir, ChainType: bchain.ChainEthereumType, Coin: "Test", Network: "test"}
}

// An Ethereum-type index made before the functionSignatures family
// existed keeps working without a resync: a read-only open reads no
// signatures and changes nothing, a normal open adds the family.
func TestOpenAddsMissingFunctionSignatures(t *testing.T) {
	dir := createIndexOf(t, ethTestOptions, db.CFFunctionSignatures)
	before := listCFs(t, dir)
	if slices.Contains(before, db.CFFunctionSignatures.String()) {
		t.Fatal("the family was not dropped")
	}
	o := ethTestOptions(dir)
	o.ReadOnly = true
	ro, err := Open(o)
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	sel := calldata.Selector("transfer(address,uint256)")
	if sigs, err := db.ReadSignatures(ro, sel); sigs != nil || err != nil {
		t.Errorf("read-only read: %v %v", sigs, err)
	}
	ro.Close()
	if after := listCFs(t, dir); !slices.Equal(after, before) {
		t.Fatalf("read-only open changed the column families to %v", after)
	}
	d, err := Open(ethTestOptions(dir))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := d.WriteStandardSignatures(); err != nil {
		t.Fatal(err)
	}
	sigs, err := db.ReadSignatures(d, sel)
	d.Close()
	if err != nil || len(sigs) != 1 || sigs[0].Text() != "transfer(address,uint256)" {
		t.Fatalf("after the open: %v %v", sigs, err)
	}
	if after := listCFs(t, dir); !slices.Contains(after, db.CFFunctionSignatures.String()) {
		t.Fatalf("functionSignatures not added: %v", after)
	}
}
