package mesh_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// Chains the generator cannot make, indexed by the real index code from
// the fixture's blocks rewritten before they are connected, and judged by
// the reconciliation (every coin created once and spent once, by its
// account, every balance as the operations sum it).

// parsedChain is the fixture chain's blocks as the index receives them.
func parsedChain(t *testing.T) []*bchain.Block {
	t.Helper()
	c, err := apitest.SharedChain()
	if err != nil {
		t.Fatal(err)
	}
	p := btc.NewParser(c.Params)
	out := make([]*bchain.Block, len(c.Raw))
	for h, raw := range c.Raw {
		if out[h], err = p.ParseBlock(raw); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func reconcile(t *testing.T, f *fixture) *meshcheck.Report {
	t.Helper()
	r, err := f.client.Reconcile(map[string]bool{"unspendable": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Mismatches {
		t.Error(m)
	}
	return r
}

// coinsOf lists the coins the reconciliation left to acct, sorted.
func coinsOf(r *meshcheck.Report, acct string) []string {
	var out []string
	for id, c := range r.Coins {
		if c.Account == acct {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// TestDuplicateCoinbase repeats the coinbase of block e as the coinbase
// of the tip, as Bitcoin mainnet's blocks 91842 and 91880 repeat those of
// 91812 and 91722 (BIP30): the earlier coinbase's coins are created by
// its block and lost in the later one, which creates them anew.
func TestDuplicateCoinbase(t *testing.T) {
	blocks := parsedChain(t)
	l := len(blocks) - 1 // nothing spends the tip's coinbase
	e := l - 3           // nor one 3 blocks deep (maturity)
	dup := blocks[e].Txs[0]
	af := apitest.NewRewritten(t, apitest.Options{}, func(h int, blk *bchain.Block) {
		if h == l {
			blk.Txs[0] = dup
		}
	})
	af.Backend.Params.DuplicateCoinbases = []bchain.DuplicateCoinbase{{Txid: dup.Txid, Height: uint32(e), Later: uint32(l)}}
	f := newFixtureOver(t, af, nil)
	r := reconcile(t, f)

	txid := dup.Txid.String()
	var lost, created []string
	for _, h := range []int{e, l} {
		var tx struct {
			Transaction transaction `json:"transaction"`
		}
		err := f.client.Call("/block/transaction", map[string]any{"block_identifier": map[string]any{"index": h, "hash": f.BlockHash(h)},
			"transaction_identifier": map[string]any{"hash": txid}}, &tx)
		if err != nil {
			t.Fatalf("block %d: %v", h, err)
		}
		for _, op := range tx.Transaction.Operations {
			switch {
			case op.Type == "OVERWRITTEN" && h == l:
				lost = append(lost, op.CoinChange.CoinIdentifier.Identifier)
			case op.Type == "OVERWRITTEN":
				t.Errorf("block %d books a loss", h)
			case op.Type == "OUTPUT" && h == e:
				created = append(created, op.CoinChange.CoinIdentifier.Identifier)
			}
		}
	}
	if len(lost) == 0 || !slices.Equal(lost, created) {
		t.Errorf("block %d loses coins %v, block %d created %v", l, lost, e, created)
	}
	// /account/coins lists what the operations leave, each coin once.
	for _, o := range dup.Vout {
		addr := f.Address(o.Script)
		if addr == "" || o.Value == 0 {
			continue
		}
		var coins struct {
			Coins []struct {
				CoinIdentifier struct {
					Identifier string `json:"identifier"`
				} `json:"coin_identifier"`
			} `json:"coins"`
		}
		if err := f.client.Call("/account/coins", map[string]any{"account_identifier": map[string]any{"address": addr},
			"include_mempool": false}, &coins); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range coins.Coins {
			got = append(got, c.CoinIdentifier.Identifier)
		}
		slices.Sort(got)
		if want := coinsOf(r, addr); !slices.Equal(got, want) {
			t.Errorf("%s: /account/coins %v, the operations leave %v", addr, got, want)
		}
	}
}

// TestEmptyScriptOutputs rewrites two spent outputs to empty scripts, one
// keeping its value and one of value 0: both sides of each coin agree
// (the index keeps neither script).
func TestEmptyScriptOutputs(t *testing.T) {
	blocks := parsedChain(t)
	type place struct{ h, tx, vout int }
	spent := map[string]bool{}
	for _, b := range blocks {
		for _, tx := range b.Txs {
			for _, in := range tx.Vin {
				spent[fmt.Sprintf("%s:%d", in.PrevTxid, in.PrevVout)] = true
			}
		}
	}
	var picks []place
	for h := 1; h < len(blocks) && len(picks) < 2; h++ {
		for i, tx := range blocks[h].Txs {
			if i > 0 && len(picks) < 2 && tx.Vout[0].Value > 0 && spent[fmt.Sprintf("%s:0", tx.Txid)] {
				picks = append(picks, place{h, i, 0})
				break
			}
		}
	}
	if len(picks) < 2 {
		t.Fatal("the chain has no two spent outputs to rewrite")
	}
	af := apitest.NewRewritten(t, apitest.Options{}, func(h int, blk *bchain.Block) {
		for n, p := range picks {
			if p.h == h {
				o := &blk.Txs[p.tx].Vout[p.vout]
				o.Script = nil
				if n == 1 {
					o.Value = 0
				}
			}
		}
	})
	f := newFixtureOver(t, af, nil)
	r := reconcile(t, f)
	for n, p := range picks {
		id := fmt.Sprintf("%s:%d", blocks[p.h].Txs[p.tx].Txid, p.vout)
		if _, left := r.Coins[id]; left {
			t.Errorf("coin %s (rewrite %d) is never spent", id, n)
		}
	}
	if r.Balances["unspendable"] < 0 {
		t.Errorf("unspendable holds %d", r.Balances["unspendable"])
	}
}

// staleRefs answers a block lookup with the hash the chain had at height
// before a reorg, as a read made just before one sees it.
type staleRefs struct {
	api.EsploraQueries
	height uint32
	hash   bchain.Hash
}

func (s staleRefs) EsploraBlockRefs(ctx context.Context, heights []uint32) (map[uint32]api.EsploraBlockRef, error) {
	refs, err := s.EsploraQueries.EsploraBlockRefs(ctx, heights)
	if r, ok := refs[s.height]; ok {
		r.Hash = s.hash
		refs[s.height] = r
	}
	return refs, err
}

// TestBalanceAcrossReorg forces a reorg between the block's resolution
// and the balance's read: the answer is the retriable error 4, never the
// orphaned hash with the new chain's balance.
func TestBalanceAcrossReorg(t *testing.T) {
	af := apitest.Shared(t, apitest.Options{})
	h := uint32(af.TipHeight() - 1)
	orphan, err := bchain.ParseHash(af.BlockHash(int(h) + 1)) // any other block's hash
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOver(t, af, func(svc api.EsploraQueries) api.EsploraQueries {
		return staleRefs{EsploraQueries: svc, height: h, hash: orphan}
	})
	addr := f.Address(af.Block(int(h)).Transactions[0].TxOut[0].PkScript)
	err = f.client.Call("/account/balance", map[string]any{"account_identifier": map[string]any{"address": addr},
		"block_identifier": map[string]any{"index": h}}, nil)
	var ae *meshcheck.AnswerError
	if !errors.As(err, &ae) || ae.Code != 4 || !ae.Retriable {
		t.Errorf("balance at a block replaced under the read: %v, want error 4", err)
	}
	// The coins come with the tip of their own snapshot.
	var coins struct {
		BlockIdentifier blockID `json:"block_identifier"`
	}
	if err := f.client.Call("/account/coins", map[string]any{"account_identifier": map[string]any{"address": addr},
		"include_mempool": false}, &coins); err != nil {
		t.Fatal(err)
	}
	if tip := af.TipHeight(); coins.BlockIdentifier != (blockID{Index: int64(tip), Hash: af.BlockHash(tip)}) {
		t.Errorf("coins at %v, the tip is %d", coins.BlockIdentifier, tip)
	}
}
