package db

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// testAliasTopic marks the logs testAliases reads: the emitting address
// registers the name in the data (the real decoder is eth.ENSName).
var testAliasTopic = bchain.Hash{0xe5}

func testAliases(l *bchain.EthLog) (bchain.EthAddress, string, bool) {
	if len(l.Topics) != 1 || l.Topics[0] != testAliasTopic || len(l.Data) == 0 {
		return bchain.EthAddress{}, "", false
	}
	return l.Address, string(l.Data), true
}

// addAlias appends a registration of name to addr in tx i of blk.
func addAlias(blk *bchain.Block, i int, addr bchain.EthAddress, name string) {
	rc := blk.Eth.Txs[i].Receipt
	rc.Logs = append(rc.Logs, bchain.EthLog{Address: addr, Topics: []bchain.Hash{testAliasTopic}, Data: []byte(name)})
}

// aliasChain is a synthetic chain where blocks register names: some
// addresses several times, across blocks and within one.
func aliasChain() *ethSynth {
	chain := newEthSynth(11)
	for h := range 30 {
		blk := chain.next("")
		if h%3 == 0 {
			a := bchain.EthAddress{0xee, byte(h % 4)}
			addAlias(blk, 0, a, fmt.Sprintf("name%d", h))
			addAlias(blk, 0, bchain.EthAddress{0xef, byte(h)}, fmt.Sprintf("first%d", h))
			addAlias(blk, len(blk.Eth.Txs)-1, bchain.EthAddress{0xef, byte(h)}, fmt.Sprintf("last%d", h))
		}
	}
	return chain
}

func newAliasIndex(t *testing.T, keep int, blocks []*bchain.Block) *EthIndex {
	t.Helper()
	x := NewEthIndex(openEthTestDB(t), keep, testContractSource)
	x.SetAliases(testAliases)
	for _, b := range blocks {
		connectEth(t, x, b)
	}
	return x
}

func readAlias(t *testing.T, x *EthIndex, a bchain.EthAddress) string {
	t.Helper()
	n, err := ReadAddressAlias(x.db, a.AddrDesc())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAddressAliasNewestWins(t *testing.T) {
	chain := aliasChain()
	x := newAliasIndex(t, 5, chain.blocks)
	// 0xee,1 registered at heights 9 and 21: the newest is the alias.
	if got := readAlias(t, x, bchain.EthAddress{0xee, 1}); got != "name21" {
		t.Errorf("alias = %q, want name21", got)
	}
	// Within a block the last registration wins.
	if got := readAlias(t, x, bchain.EthAddress{0xef, 6}); got != "last6" {
		t.Errorf("alias = %q, want last6", got)
	}
	if got := readAlias(t, x, bchain.EthAddress{0xee, 9}); got != "" {
		t.Errorf("unregistered address has alias %q", got)
	}
	// Dropping block 21 brings back the registration of height 9.
	for range 9 {
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	if got := readAlias(t, x, bchain.EthAddress{0xee, 1}); got != "name9" {
		t.Errorf("after the reorg alias = %q, want name9", got)
	}
}

// Disconnecting blocks with registrations ends byte-identical to a fresh
// sync of the shorter chain.
func TestAddressAliasDisconnectMirrorsConnect(t *testing.T) {
	chain := aliasChain()
	for _, depth := range []int{1, 4, 30} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			a := newAliasIndex(t, 40, chain.blocks)
			for range depth {
				if _, _, err := a.DisconnectTip(chain.refill); err != nil {
					t.Fatal(err)
				}
			}
			b := newAliasIndex(t, 40, chain.blocks[:30-depth])
			diffs, err := Diff(a.db, b.db, ColumnFamilies(bchain.ChainEthereumType), 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

// Without address_aliases no rows are written; reverted txs never count.
func TestAddressAliasOffAndReverted(t *testing.T) {
	chain := aliasChain()
	x := newEthTestIndex(t, 5, chain.blocks)
	n, err := x.db.countKeys(CFAddressAliases, 10)
	if err != nil || n != 0 {
		t.Fatalf("aliases off: %d rows, %v", n, err)
	}
	blk := chain.next("")
	blk.Eth.Txs[0].Receipt.Status = bchain.EthStatusFailure
	addAlias(blk, 0, bchain.EthAddress{0xfa}, "reverted")
	names, _ := blockAliases(blk.Eth, testAliases)
	if len(names) != 0 {
		t.Errorf("reverted tx registered %v", names)
	}
}

func TestAliasRows(t *testing.T) {
	a := bchain.EthAddress{1, 2, 3}.AddrDesc()
	k := aliasKey(a, 77)
	got, h, err := unpackAliasKey(k)
	if err != nil || !bytes.Equal(got, a) || h != 77 {
		t.Fatalf("key %x: %x %d %v", k, got, h, err)
	}
	// Newer heights sort first.
	if bytes.Compare(aliasKey(a, 78), k) >= 0 {
		t.Error("height 78 does not sort before 77")
	}
	for _, bad := range [][]byte{nil, {}, make([]byte, maxAliasLen+1)} {
		if _, err := unpackAliasName(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("name of %d bytes: %v", len(bad), err)
		}
	}
	b := bchain.EthAddress{9}.AddrDesc()
	if _, err := unpackAliasBlock(packAliasBlock([]bchain.AddrDesc{b, a})); !errors.Is(err, ErrCorrupt) {
		t.Errorf("unsorted block list: %v", err)
	}
	if _, err := unpackAliasBlock(append(packAliasBlock([]bchain.AddrDesc{a}), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ragged block list: %v", err)
	}
}
