package syncer_test

// The Ethereum-type index against a real go-ethereum dev node: the sync
// worker indexes ethgen's scenario (every tx type, tokens of every
// standard, internal transfers, failed txs, creations and a selfdestruct)
// and the rows must equal the scenario's own ledger; a reorg deep into the
// token blocks must end byte-identical to a fresh sync.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/eth"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

var quiet = slog.New(slog.DiscardHandler)

type ethStack struct {
	dev     *gethdev.Node
	backend *bchain.Backend
}

func startEthStack(t *testing.T) (*ethStack, *ethgen.Ledger) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, err := gethdev.Start(ctx, gethdev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	ledger, err := ethgen.Scenario(ctx, dev)
	if err != nil {
		t.Fatal(err)
	}
	b := backendFromConfig(t, map[string]any{"coin_name": "Ethereum Regtest", "rpc_url": dev.HTTPURL, "rpc_url_ws": dev.WSURL, "rpc_timeout": 20})
	return &ethStack{dev: dev, backend: b}, ledger
}

// backendFromConfig builds the registered backend a blockchaincfg.json
// document describes, closed when the test ends.
func backendFromConfig(t *testing.T, doc map[string]any) *bchain.Backend {
	t.Helper()
	raw, _ := json.Marshal(doc)
	cfg, err := bchain.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if b.Close != nil {
		t.Cleanup(func() {
			if err := b.Close(); err != nil {
				t.Errorf("closing the backend: %v", err)
			}
		})
	}
	return b
}

// syncIndex syncs a new index in a temp dir up to the node's tip.
func (st *ethStack) syncIndex(t *testing.T) (*db.DB, *db.EthIndex) {
	t.Helper()
	d, err := rocksdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainEthereumType, Coin: "Ethereum Regtest", Network: "regtest", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	x := db.NewEthIndex(d, 300, st.backend.Eth.ContractInfo)
	st.sync(t, x)
	return d, x
}

func (st *ethStack) sync(t *testing.T, x *db.EthIndex) {
	t.Helper()
	s := syncer.New(st.backend.Chain, x, syncer.Config{Workers: 2}, quiet, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	tip, _, err := x.Tip()
	if err != nil {
		t.Fatal(err)
	}
	if h, hash := st.dev.Head(); uint64(tip.Height) != h || common.Hash(tip.Hash) != hash {
		t.Fatalf("index at %d %s, node at %d %s", tip.Height, tip.Hash, h, hash)
	}
}

func TestEthIndexMatchesLedger(t *testing.T) {
	st, ledger := startEthStack(t)
	d, _ := st.syncIndex(t)
	checked := 0
	for addr, want := range ledger.Addresses {
		checkEthAddress(t, d, addr, want)
		checked++
	}
	for addr, want := range ledger.Contracts {
		checkEthContract(t, d, ledger, addr, want)
	}
	for h, tx := range ledger.Txs {
		if tx.Pending {
			continue
		}
		id, err := db.ReadInternalData(d, bchain.Hash(h))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if id != nil {
			for _, it := range id.Transfers {
				got = append(got, fmt.Sprintf("%d %x>%x %s", it.Kind, []byte(it.From), []byte(it.To), it.Value))
			}
		}
		var want []string
		for _, it := range tx.InternalTransfers {
			want = append(want, fmt.Sprintf("%d %x>%x %s", internalKind(it.Type), it.From[:], it.To[:], it.Value))
		}
		if !slices.Equal(got, want) {
			t.Errorf("tx %s internal transfers %v, want %v", h, got, want)
		}
	}
	if checked < 10 || len(ledger.Contracts) < 5 {
		t.Fatalf("the scenario is thin: %d addresses, %d contracts", checked, len(ledger.Contracts))
	}
}

func internalKind(s string) bchain.EthInternalType {
	switch s {
	case ethgen.InternalCreate:
		return bchain.EthInternalCreate
	case ethgen.InternalSelfDestruct:
		return bchain.EthInternalSelfDestruct
	}
	return bchain.EthInternalCall
}

func checkEthAddress(t *testing.T, d *db.DB, addr common.Address, want *ethgen.Address) {
	t.Helper()
	desc := bchain.AddrDesc(addr.Bytes())
	ac, err := db.ReadAddrContracts(d, desc)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Txs) == 0 {
		if ac != nil {
			t.Errorf("%s (%s): a row without txs: %+v", addr, want.Name, ac)
		}
		return
	}
	if ac == nil {
		t.Errorf("%s (%s): no row, want %d txs", addr, want.Name, len(want.Txs))
		return
	}
	if int(ac.Txs) != len(want.Txs) || int(ac.NonTokenTxs) != want.NonTokenTxs || int(ac.InternalTxs) != want.InternalTxs {
		t.Errorf("%s (%s): txs %d/%d/%d, want %d/%d/%d (all/non-token/internal)", addr, want.Name,
			ac.Txs, ac.NonTokenTxs, ac.InternalTxs, len(want.Txs), want.NonTokenTxs, want.InternalTxs)
	}
	// The addresses rows list each of its txs once.
	var txids []string
	err = db.IterateEthAddrTxs(d, desc, ^uint32(0), 0, func(row db.EthAddrTxsAt) (bool, error) {
		for _, tx := range row.Txs {
			txids = append(txids, tx.Txid.String())
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wantIDs []string
	for h := range want.Txs {
		wantIDs = append(wantIDs, h.Hex()[2:])
	}
	slices.Sort(txids)
	slices.Sort(wantIDs)
	if !slices.Equal(txids, wantIDs) {
		t.Errorf("%s (%s): addresses rows list %d txs, want %d", addr, want.Name, len(txids), len(wantIDs))
	}
	// Token holdings.
	if len(ac.Contracts) != len(want.Tokens) {
		t.Errorf("%s (%s): %d token contracts, want %d", addr, want.Name, len(ac.Contracts), len(want.Tokens))
	}
	for _, c := range ac.Contracts {
		hd := want.Tokens[common.BytesToAddress(c.Contract)]
		if hd == nil {
			t.Errorf("%s (%s): unexpected contract %x", addr, want.Name, []byte(c.Contract))
			continue
		}
		if got := holding(c); got != wantHolding(hd) || int(c.Transfers) != hd.Transfers {
			t.Errorf("%s (%s) on %x: %s with %d transfers, want %s with %d", addr, want.Name, []byte(c.Contract),
				got, c.Transfers, wantHolding(hd), hd.Transfers)
		}
	}
}

func holding(c db.AddrContract) string {
	switch c.Standard {
	case bchain.TokenERC20:
		return "ERC20 " + c.Balance.String()
	case bchain.TokenERC721, bchain.TokenERC1155:
		s := c.Standard.String()
		for _, v := range c.Values {
			s += " " + v.ID.String() + ":" + v.Value.String()
		}
		return s
	}
	return "unknown"
}

func wantHolding(hd *ethgen.Holding) string {
	switch hd.Standard {
	case ethgen.ERC20:
		return "ERC20 " + hd.Balance.String()
	case ethgen.ERC721:
		vals := map[string]*big.Int{}
		for id := range hd.NFTs {
			vals[id] = big.NewInt(1)
		}
		return "ERC721" + sortedValues(vals)
	case ethgen.ERC1155:
		return "ERC1155" + sortedValues(hd.Multi)
	}
	return "unknown"
}

func sortedValues(m map[string]*big.Int) string {
	ids := make([]*big.Int, 0, len(m))
	for id, v := range m {
		if v.Sign() != 0 {
			n, _ := new(big.Int).SetString(id, 10)
			ids = append(ids, n)
		}
	}
	slices.SortFunc(ids, func(a, b *big.Int) int { return a.Cmp(b) })
	s := ""
	for _, id := range ids {
		s += " " + id.String() + ":" + m[id.String()].String()
	}
	return s
}

func checkEthContract(t *testing.T, d *db.DB, l *ethgen.Ledger, addr common.Address, want *ethgen.ContractInfo) {
	t.Helper()
	ci, err := db.ReadContractInfo(d, bchain.AddrDesc(addr.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if ci == nil {
		t.Errorf("contract %s (%s): no row", addr, want.Kind)
		return
	}
	if ci.Name != want.Name || ci.Symbol != want.Symbol || int(ci.Decimals) != want.Decimals {
		t.Errorf("contract %s (%s): %q %q %d, want %q %q %d", addr, want.Kind, ci.Name, ci.Symbol, ci.Decimals, want.Name, want.Symbol, want.Decimals)
	}
	if std := ci.Standard(); want.Standard != "" && std.String() != want.Standard && hasTransfers(l, addr) {
		t.Errorf("contract %s (%s): standard %v, want %s", addr, want.Kind, std, want.Standard)
	}
	created, _ := ci.Lifetime()
	for _, tx := range l.Txs {
		if tx.Created == addr && uint64(created) != tx.BlockNumber {
			t.Errorf("contract %s (%s): created at %d, want %d", addr, want.Kind, created, tx.BlockNumber)
		}
	}
}

func hasTransfers(l *ethgen.Ledger, contract common.Address) bool {
	for _, tx := range l.Txs {
		for _, tt := range tx.TokenTransfers {
			if tt.Contract == contract && !tx.Pending {
				return true
			}
		}
	}
	return false
}

// A reorg that replaces the blocks holding token mints and transfers ends
// byte-identical to a fresh sync of the new branch.
func TestEthReorgEndsIdenticalToFreshSync(t *testing.T) {
	st, ledger := startEthStack(t)
	if _, err := st.dev.Commit(); err != nil { // mine the pending txs
		t.Fatal(err)
	}
	d, x := st.syncIndex(t)
	if len(ledger.Blocks) < 4 {
		t.Fatalf("scenario has %d blocks", len(ledger.Blocks))
	}
	fork := ledger.Blocks[1] // the orphaned branch starts with the token blocks
	if err := st.dev.Fork(fork.Hash); err != nil {
		t.Fatal(err)
	}
	head, _ := st.dev.Head()
	for range 2 {
		if _, err := st.dev.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := st.dev.Head(); h != head+2 || h <= fork.Number {
		t.Fatalf("new branch head %d after fork at %d", h, fork.Number)
	}
	st.sync(t, x)
	fresh, _ := st.syncIndex(t)
	diffs, err := db.Diff(d, fresh, db.ColumnFamilies(bchain.ChainEthereumType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, df := range diffs {
		t.Error(df)
	}
}
