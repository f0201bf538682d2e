package api

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// The vault cache holds one block's answers: a later block or a reorg at
// the same height replaces them, a request still on an earlier block
// leaves them; the assets of vaults seen are kept across blocks.
func TestVaultCacheFollowsTip(t *testing.T) {
	tip := func(h uint32, b byte) db.Tip { return db.Tip{Height: h, Hash: bchain.Hash{b}} }
	var c vaultCache
	c.at(tip(10, 1))
	c.snaps["v"], c.probes["v"], c.assets["v"] = &Erc4626Token{}, true, bchain.AddrDesc{1}
	c.at(tip(9, 2)) // a request begun before block 10
	if c.tip != (bchain.Hash{1}) || c.snaps["v"] == nil {
		t.Fatal("an earlier block's request dropped the tip's answers")
	}
	c.at(tip(10, 3)) // a reorg at the same height
	if c.tip != (bchain.Hash{3}) || len(c.snaps) != 0 || len(c.probes) != 0 || c.assets["v"] == nil {
		t.Fatalf("after a same-height reorg: tip %x, %d snaps, %d probes, assets %v", c.tip, len(c.snaps), len(c.probes), c.assets)
	}
	c.snaps["v"] = nil
	c.at(tip(11, 4))
	if _, ok := c.snaps["v"]; ok || c.height != 11 {
		t.Fatal("a new block kept the previous block's answers")
	}
}
