package syncer_test

// The Tron chain type against the java-tron double (no java-tron runs
// here): the sync worker follows the double over its JSON-RPC and HTTP
// APIs into a RocksDB index, and every address's tx list and token
// balances must equal what the double's own tx facts say; after a reorg
// of unsolidified blocks the index must be byte-identical to a fresh sync.

import (
	"context"
	"math/big"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/tron"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/trondouble"
)

func tronBackend(t *testing.T, s *trondouble.Server) *bchain.Backend {
	t.Helper()
	cfg := s.Config("Tron")
	cfg["processInternalTransactions"] = true
	b := backendFromConfig(t, cfg)
	if b.Type != bchain.ChainTronType {
		t.Fatalf("chain type %v", b.Type)
	}
	return b
}

func tronIndex(t *testing.T, b *bchain.Backend) (*db.DB, *db.EthIndex) {
	t.Helper()
	d, err := rocksdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainTronType, Coin: "Tron", Network: "mainnet", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, db.NewEthIndex(d, 100, b.Chain.(*tron.Node).ContractInfo)
}

func syncTron(t *testing.T, b *bchain.Backend, x *db.EthIndex, c *trondouble.Chain) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := syncer.New(b.Chain, x, syncer.Config{Workers: 2}, quiet, nil).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	tip, _, err := x.Tip()
	if err != nil {
		t.Fatal(err)
	}
	if want := c.Tip(); int64(tip.Height) != want.Number || tip.Hash != bchain.Hash(want.ID) {
		t.Fatalf("index at %d %s, double at %d %x", tip.Height, tip.Hash, want.Number, want.ID)
	}
}

// expected computes, from the double's blocks alone, each address's txs
// (newest first; a tx once however many roles) and TRC-20 balances.
func expected(c *trondouble.Chain) (map[trondouble.Addr][]bchain.Hash, map[trondouble.Addr]map[trondouble.Addr]*big.Int) {
	txs := map[trondouble.Addr][]bchain.Hash{}
	bal := map[trondouble.Addr]map[trondouble.Addr]*big.Int{}
	move := func(a, tok trondouble.Addr, v int64) {
		if bal[a] == nil {
			bal[a] = map[trondouble.Addr]*big.Int{}
		}
		if bal[a][tok] == nil {
			bal[a][tok] = new(big.Int)
		}
		bal[a][tok].Add(bal[a][tok], big.NewInt(v))
	}
	for _, b := range c.Blocks() {
		for _, tx := range b.Txs {
			seen := map[trondouble.Addr]bool{}
			for _, a := range tx.Parties() {
				if !seen[a] {
					seen[a] = true
					txs[a] = append(txs[a], bchain.Hash(tx.ID))
				}
			}
			if tx.Token != nil && !tx.Failed {
				move(tx.Owner, *tx.Token, -tx.Amount)
				move(tx.TokenTo, *tx.Token, tx.Amount)
			}
		}
	}
	for a := range txs {
		slices.Reverse(txs[a])
	}
	return txs, bal
}

func checkTronLedger(t *testing.T, d *db.DB, c *trondouble.Chain) int {
	t.Helper()
	wantTxs, wantBal := expected(c)
	for a, want := range wantTxs {
		var got []bchain.Hash
		err := db.IterateEthAddrTxs(d, a[:], ^uint32(0), 0, func(at db.EthAddrTxsAt) (bool, error) {
			for _, tx := range at.Txs {
				got = append(got, tx.Txid)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("address %s: %d txs %v, want %d %v", tron.EncodeAddress(a[:]), len(got), got, len(want), want)
		}
		ac, err := db.ReadAddrContracts(d, a[:])
		if err != nil || ac == nil {
			t.Fatalf("address %s contracts: %v %v", tron.EncodeAddress(a[:]), ac, err)
		}
		gotBal := map[trondouble.Addr]string{}
		for _, ct := range ac.Contracts {
			if ct.Standard != bchain.TokenERC20 {
				t.Errorf("address %s: contract %x standard %v", tron.EncodeAddress(a[:]), []byte(ct.Contract), ct.Standard)
			}
			gotBal[trondouble.Addr(ct.Contract)] = ct.Balance.String()
		}
		for tok, v := range wantBal[a] {
			if gotBal[tok] != v.String() {
				t.Errorf("address %s token %s: balance %s, want %s", tron.EncodeAddress(a[:]), tron.EncodeAddress(tok[:]), gotBal[tok], v)
			}
		}
		if len(gotBal) != len(wantBal[a]) {
			t.Errorf("address %s: %d token contracts, want %d", tron.EncodeAddress(a[:]), len(gotBal), len(wantBal[a]))
		}
	}
	return len(wantTxs)
}

func TestTronSyncMatchesDoubleLedger(t *testing.T) {
	c := trondouble.New(trondouble.Options{Seed: 40, Accounts: 10, Tokens: 3, SolidDepth: 19})
	c.Mine(80, 8)
	s := trondouble.Serve(c)
	defer s.Close()
	b := tronBackend(t, s)
	d, x := tronIndex(t, b)
	syncTron(t, b, x, c)
	if n := checkTronLedger(t, d, c); n < 10 {
		t.Fatalf("only %d addresses", n)
	}
	for i, tok := range c.Tokens {
		ci, err := db.ReadContractInfo(d, tok[:])
		if err != nil || ci == nil || ci.Name != trondouble.TokenName(i) || ci.Symbol != trondouble.TokenSymbol(i) ||
			int(ci.Decimals) != trondouble.TokenDecimals(i) || ci.Standard() != bchain.TokenERC20 {
			t.Errorf("token %s: %+v %v", tron.EncodeAddress(tok[:]), ci, err)
		}
	}
	checkInternal(t, d, c)
	kinds := map[string]int{}
	for _, blk := range c.Blocks() {
		for _, tx := range blk.Txs {
			kinds[tx.Kind]++
			if tx.Failed {
				kinds["failed"]++
			}
			if tx.Kind == trondouble.KindCreateContract && tx.Failed {
				kinds["failed creation"]++
			}
			if tx.InternalTo != nil {
				kinds[map[bool]string{false: "internal", true: "rejected"}[tx.Failed]]++
			}
		}
	}
	for _, k := range []string{trondouble.KindTransfer, trondouble.KindTrigger, "failed", "internal", "rejected", trondouble.KindFreeze, trondouble.KindUnfreeze, trondouble.KindFreezeV1, trondouble.KindUnfreezeV1,
		trondouble.KindVote, trondouble.KindDelegate, trondouble.KindUndelegate, trondouble.KindCreateAcct, trondouble.KindTRC10,
		trondouble.KindWithdrawExpire, trondouble.KindWithdrawReward, trondouble.KindCreateContract, "failed creation"} {
		if kinds[k] == 0 {
			t.Errorf("the generated chain has no %s", k)
		}
	}
	// Blocks at or under the solidified height came from the solidity
	// API, the others from the full node's, as Blockbook reads them.
	for _, p := range []string{"/walletsolidity/getblockbyid", "/wallet/getblockbyid", "/walletsolidity/gettransactioninfobyblocknum", "/wallet/gettransactioninfobyblocknum"} {
		if s.Calls(p) == 0 {
			t.Errorf("no call of %s", p)
		}
	}

	// A reorg of unsolidified blocks, then more blocks: the index follows,
	// and ends byte-identical to a fresh sync of the new branch.
	if err := c.Reorg(6, 8); err != nil {
		t.Fatal(err)
	}
	c.Mine(4, 8)
	syncTron(t, b, x, c)
	checkTronLedger(t, d, c)
	fresh, fx := tronIndex(t, b)
	syncTron(t, b, fx, c)
	diffs, err := db.Diff(d, fresh, db.ColumnFamilies(bchain.ChainTronType), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Errorf("after the reorg the index differs from a fresh sync:\n%v", diffs)
	}
}

// cancelAfter is a node whose context-bound calls stop once n blocks
// were fetched: the sync is cut off mid-way, as by a stop.
type cancelAfter struct {
	syncer.Node
	n      atomic.Int64 // blocks left; the workers fetch at once
	cancel context.CancelFunc
}

func (c *cancelAfter) Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	if c.n.Add(-1) < 0 {
		c.cancel()
		return nil, context.Canceled
	}
	return c.Node.Block(ctx, hash, height)
}

// A sync cut off mid-way and resumed ends byte-identical to one
// uninterrupted sync: each block is one atomic write.
func TestTronSyncInterrupted(t *testing.T) {
	c := trondouble.New(trondouble.Options{Seed: 41, SolidDepth: 19})
	c.Mine(60, 6)
	s := trondouble.Serve(c)
	defer s.Close()
	b := tronBackend(t, s)
	d, x := tronIndex(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := &cancelAfter{Node: b.Chain, cancel: cancel}
	node.n.Store(25)
	if err := syncer.New(node, x, syncer.Config{Workers: 2}, quiet, nil).Sync(ctx); err == nil {
		t.Fatal("the cut-off sync finished")
	}
	if tip, ok, err := x.Tip(); err != nil || !ok || tip.Height >= 60 {
		t.Fatalf("after the cut: tip %+v %v %v", tip, ok, err)
	}
	syncTron(t, b, x, c)
	fresh, fx := tronIndex(t, b)
	syncTron(t, b, fx, c)
	diffs, err := db.Diff(d, fresh, db.ColumnFamilies(bchain.ChainTronType), 10)
	if err != nil || len(diffs) > 0 {
		t.Errorf("the resumed index differs from a fresh sync: %v %v", diffs, err)
	}
}

// checkInternal: a contract call's inner TRX transfer is kept unless the
// call failed (its inner call then rejected), which is kept as an error.
func checkInternal(t *testing.T, d *db.DB, c *trondouble.Chain) {
	t.Helper()
	for _, blk := range c.Blocks() {
		for _, tx := range blk.Txs {
			if tx.InternalTo == nil {
				continue
			}
			id, err := db.ReadInternalData(d, bchain.Hash(tx.ID))
			if err != nil || id == nil {
				t.Fatalf("tx %x: internal data %v %v", tx.ID, id, err)
			}
			if tx.Failed {
				if len(id.Transfers) != 0 || id.Error == "" {
					t.Errorf("failed tx %x: %+v", tx.ID, id)
				}
				continue
			}
			if len(id.Transfers) != 1 || string(id.Transfers[0].From) != string(tx.To[:]) ||
				string(id.Transfers[0].To) != string(tx.InternalTo[:]) || id.Transfers[0].Value.Int64() != tx.CallValue {
				t.Errorf("tx %x: internal %+v", tx.ID, id)
			}
		}
	}
}
