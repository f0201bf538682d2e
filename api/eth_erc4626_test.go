package api

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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

// probeChain answers Multicall as a chain where the contracts listed in
// vaults are ERC-4626 vaults (asset() an address, totalAssets() a number)
// and every other contract reverts; it counts the calls.
type probeChain struct {
	bchain.EthereumChain
	vaults map[string]bool
	calls  int
}

func (p *probeChain) Multicall(_ context.Context, calls []bchain.EthMulticall, _ bchain.EthBlockTag) ([]bchain.EthMulticallResult, error) {
	p.calls += len(calls)
	out := make([]bchain.EthMulticallResult, len(calls))
	for i, c := range calls {
		if p.vaults["0x"+hex.EncodeToString(c.Target)] {
			out[i] = bchain.EthMulticallResult{Success: true, Data: append(make([]byte, 31), 7)}
		}
	}
	return out, nil
}

type hexParser struct{ hexAddrs }

func (hexParser) AddrDescFromAddress(a string) (bchain.AddrDesc, error) {
	return hex.DecodeString(strings.TrimPrefix(a, "0x"))
}

// One request probes at most maxVaultProbes unknown tokens; "not a vault"
// is remembered across blocks for nonVaultTTL, so the next requests probe
// the rest, and a vault among them is marked in the end.
func TestMarkVaultsCapsProbes(t *testing.T) {
	chain := &probeChain{vaults: map[string]bool{}}
	s := NewEthService(nil, &bchain.Backend{Addresses: hexParser{}, Eth: chain}, nil, Config{})
	clock := time.Unix(1_700_000_000, 0)
	s.vaults.now = func() time.Time { return clock }
	tokens := make([]Token, 3*maxVaultProbes-10)
	for i := range tokens {
		tokens[i] = Token{Standard: bchain.TokenERC20.String(), Contract: fmt.Sprintf("0x%040x", i+1)}
	}
	last := tokens[len(tokens)-1].Contract
	chain.vaults[last] = true
	mark := func(h uint32) (probed int, marked bool) {
		before := chain.calls
		ts := slices.Clone(tokens)
		s.markVaults(context.Background(), &view{tip: db.Tip{Height: h, Hash: bchain.Hash{byte(h)}}}, ts)
		return (chain.calls - before) / 2, ts[len(ts)-1].Protocols != nil
	}
	for h, want := range []int{maxVaultProbes, maxVaultProbes, len(tokens) - 2*maxVaultProbes, 0} {
		probed, marked := mark(uint32(h) + 1) // a new block each time
		if probed != want || marked != (h >= 2) {
			t.Fatalf("request %d: %d tokens probed, the vault marked %v; want %d, %v", h, probed, marked, want, h >= 2)
		}
	}
	clock = clock.Add(nonVaultTTL)
	if probed, marked := mark(9); probed != maxVaultProbes || !marked {
		t.Fatalf("after the TTL: %d probed, vault marked %v; want %d, true", probed, marked, maxVaultProbes)
	}
}
