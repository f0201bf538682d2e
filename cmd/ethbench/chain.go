package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// expect is what the generator recorded (its ethgen ledger, condensed):
// the oracle the indexed run is checked against. Written last, so a chain
// directory without it is an unfinished generation.
type expect struct {
	Height            uint64
	Head              common.Hash
	Blocks            int // blocks with txs
	Txs               int
	Failed            int
	TokenTransfers    int
	InternalTransfers int
	Kinds             map[string]int
	GenSeconds        float64
	Addresses         []expectAddr
}

type expectAddr struct {
	Addr                          common.Address
	Name                          string
	Balance                       *big.Int
	Nonce                         uint64
	Txs, NonTokenTxs, InternalTxs int
}

const expectFile = "expect.json"

// loadOrGenerate returns the recorded chain in dir, generating it first
// (on a dev node whose data dir is dir) unless a finished one is there.
func loadOrGenerate(ctx context.Context, dir string, txs, accounts, perBlock int) (*expect, bool, error) {
	if data, err := os.ReadFile(filepath.Join(dir, expectFile)); err == nil {
		var e expect
		return &e, true, json.Unmarshal(data, &e)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	fmt.Printf("generating a dev chain of %d txs, %d accounts, %d txs a block (once; cached in %s)\n", txs, accounts, perBlock, dir)
	start := time.Now()
	node, err := gethdev.Start(ctx, gethdev.Options{Dir: dir})
	if err != nil {
		return nil, false, err
	}
	e, err := generate(ctx, node, txs, accounts, perBlock)
	node.Stop() // flushes the chain to dir
	if err != nil {
		return nil, false, err
	}
	e.GenSeconds = time.Since(start).Seconds()
	data, _ := json.Marshal(e)
	return e, false, os.WriteFile(filepath.Join(dir, expectFile), data, 0o644)
}

type sent struct {
	tx   *types.Transaction
	from common.Address
	eff  ethgen.Effects
	kind string
}

type gen struct {
	ctx         context.Context
	node        *gethdev.Node
	w           *ethgen.Wallet
	l           *ethgen.Ledger
	rng         *rand.Rand
	dev, minter *ethgen.Account
	acc         []*ethgen.Account
	perBlock    int
	batch       []sent
	kinds       map[string]int
	failed      int
	blocks      int
	// token contracts and the value movers
	token, nft, multi, splitter, reverter common.Address
	// NFTs each account owned when the block being built started; mints
	// and transfers of the block are applied after it is sealed, so that
	// no tx depends on another sender's tx of the same block.
	owned   [][]int64
	moves   []nftMove
	nextNFT int64
}

type nftMove struct {
	id int64
	to int
}

var (
	tokC, nftC, multiC = ethgen.MustContract(ethgen.TokenContract), ethgen.MustContract(ethgen.NFTContract), ethgen.MustContract(ethgen.MultiTokenContract)
	splitC, revC       = ethgen.MustContract(ethgen.SplitterContract), ethgen.MustContract(ethgen.ReverterContract)
	txTypes            = []uint8{types.LegacyTxType, types.AccessListTxType, types.DynamicFeeTxType}
)

func ether(n int64) *big.Int  { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether)) }
func finney(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether/1000)) }

// generate funds the accounts and deploys the contracts, then seals blocks
// of perBlock txs (two NFT mints, the rest from as many different
// accounts) until the chain has txs txs.
func generate(ctx context.Context, node *gethdev.Node, txs, accounts, perBlock int) (*expect, error) {
	w, err := ethgen.NewWallet(ctx, node.Client())
	if err != nil {
		return nil, err
	}
	g := &gen{ctx: ctx, node: node, w: w, l: ethgen.NewLedger(w.ChainID, node.Coinbase), rng: rand.New(rand.NewPCG(1, 2)),
		dev: ethgen.AccountFromKey("dev", node.DevKey), minter: ethgen.NewAccount("ethbench/minter"),
		perBlock: perBlock, kinds: map[string]int{}, owned: make([][]int64, accounts)}
	for i := range accounts {
		g.acc = append(g.acc, ethgen.NewAccount(fmt.Sprintf("ethbench/%d", i)))
	}
	devBal, err := node.Client().BalanceAt(ctx, g.dev.Addr, nil)
	if err != nil {
		return nil, err
	}
	g.l.Track("dev", g.dev.Addr, devBal, 0)
	g.l.Track("coinbase", node.Coinbase, new(big.Int), 0)
	g.l.Track(g.minter.Name, g.minter.Addr, new(big.Int), 0)
	for _, a := range g.acc {
		g.l.Track(a.Name, a.Addr, new(big.Int), 0)
	}
	if err := g.setup(); err != nil {
		return nil, err
	}
	for len(g.l.Txs) < txs {
		if err := g.block(min(perBlock, txs-len(g.l.Txs))); err != nil {
			return nil, err
		}
	}
	return g.summary(), nil
}

// setupChunk caps the setup blocks (many txs of one sender): 100 ERC1155
// mintBatch calls would not fit the block gas limit.
const setupChunk = 50

// send queues a tx for the next block; with full, setup txs are sealed
// min(perBlock, setupChunk) at a time.
func (g *gen) send(from *ethgen.Account, to *common.Address, data []byte, o ethgen.TxOpts, eff ethgen.Effects, kind string, full bool) error {
	tx, err := g.w.Send(g.ctx, from, to, data, o)
	if err != nil {
		return err
	}
	g.batch = append(g.batch, sent{tx, from.Addr, eff, kind})
	if full && len(g.batch) >= min(g.perBlock, setupChunk) {
		return g.commit()
	}
	return nil
}

func (g *gen) call(from *ethgen.Account, to common.Address, value *big.Int, c *ethgen.Contract, eff ethgen.Effects, kind string, full bool, method string, args ...any) error {
	return g.send(from, &to, c.MustCalldata(method, args...), ethgen.TxOpts{Type: types.DynamicFeeTxType, Value: value}, eff, kind, full)
}

// commit seals the batch and records every tx in the ledger from its
// receipt; the block must hold exactly the batch.
func (g *gen) commit() error {
	if len(g.batch) == 0 {
		return nil
	}
	hash, err := g.node.Commit()
	if err != nil {
		return err
	}
	c := g.node.Client()
	header, err := c.HeaderByHash(g.ctx, hash)
	if err != nil {
		return err
	}
	rcs, err := c.BlockReceipts(g.ctx, rpc.BlockNumberOrHashWithHash(hash, false))
	if err != nil {
		return err
	}
	if len(rcs) != len(g.batch) {
		return fmt.Errorf("block %d has %d txs (gas used %d), %d were sent", header.Number, len(rcs), header.GasUsed, len(g.batch))
	}
	byHash := map[common.Hash]*types.Receipt{}
	for _, r := range rcs {
		byHash[r.TxHash] = r
	}
	for _, s := range g.batch {
		r := byHash[s.tx.Hash()]
		if r == nil {
			return fmt.Errorf("block %d lacks tx %s (%s)", header.Number, s.tx.Hash(), s.kind)
		}
		if err := g.l.Apply(s.tx, s.from, r, header.BaseFee, s.eff); err != nil {
			return fmt.Errorf("%s: %w", s.kind, err)
		}
		g.kinds[s.kind]++
		if s.eff.Fails {
			g.failed++
		}
	}
	g.batch = nil
	g.blocks++
	for _, m := range g.moves {
		g.owned[m.to] = append(g.owned[m.to], m.id)
	}
	g.moves = nil
	return nil
}

// setup funds the minter and the accounts, deploys the contracts and
// hands every account tokens of each standard.
func (g *gen) setup() error {
	if err := g.send(g.dev, &g.minter.Addr, nil, ethgen.TxOpts{Type: types.DynamicFeeTxType, Value: ether(10_000)}, ethgen.Effects{}, "funding", true); err != nil {
		return err
	}
	for i, a := range g.acc {
		if err := g.send(g.dev, &a.Addr, nil, ethgen.TxOpts{Type: txTypes[i%3], Value: ether(1000)}, ethgen.Effects{}, "funding", true); err != nil {
			return err
		}
	}
	if err := g.commit(); err != nil {
		return err
	}
	supply := ether(1_000_000_000)
	deploys := []struct {
		addr *common.Address
		c    *ethgen.Contract
		info ethgen.ContractInfo
		args []any
	}{
		{&g.token, tokC, ethgen.ContractInfo{Name: "Bench Token", Symbol: "BT", Decimals: 18, Standard: ethgen.ERC20}, []any{"Bench Token", "BT", supply}},
		{&g.nft, nftC, ethgen.ContractInfo{Name: "Bench NFT", Symbol: "BNFT", Standard: ethgen.ERC721}, []any{"Bench NFT", "BNFT"}},
		{&g.multi, multiC, ethgen.ContractInfo{Standard: ethgen.ERC1155}, nil},
		{&g.splitter, splitC, ethgen.ContractInfo{}, nil},
		{&g.reverter, revC, ethgen.ContractInfo{}, nil},
	}
	for _, d := range deploys {
		data, err := d.c.DeployData(d.args...)
		if err != nil {
			return err
		}
		info := d.info
		info.Kind = d.c.Name
		nonce, _ := g.w.Nonce(g.ctx, g.minter.Addr)
		*d.addr = ethgen.ContractAddress(g.minter.Addr, nonce)
		eff := ethgen.Effects{Contract: &info}
		if d.c == tokC { // the constructor mints the supply
			eff.TokenTransfers = []ethgen.TokenTransfer{erc20(g.token, common.Address{}, g.minter.Addr, supply)}
		}
		if err := g.send(g.minter, nil, data, ethgen.TxOpts{Type: types.DynamicFeeTxType}, eff, "deploy", true); err != nil {
			return err
		}
	}
	if err := g.commit(); err != nil {
		return err
	}
	ids, vals := []*big.Int{big.NewInt(1), big.NewInt(2), big.NewInt(3), big.NewInt(4)}, []*big.Int{big.NewInt(1000), big.NewInt(1000), big.NewInt(1000), big.NewInt(1000)}
	for _, step := range []func(i int, a *ethgen.Account) error{
		func(_ int, a *ethgen.Account) error {
			v := ether(1_000_000)
			return g.call(g.minter, g.token, nil, tokC, tokens(erc20(g.token, g.minter.Addr, a.Addr, v)), "erc20 transfer", true, "transfer", a.Addr, v)
		},
		func(_ int, a *ethgen.Account) error {
			var tt []ethgen.TokenTransfer
			for j := range ids {
				tt = append(tt, erc1155(g.multi, common.Address{}, a.Addr, ids[j].Int64(), vals[j].Int64()))
			}
			return g.call(g.minter, g.multi, nil, multiC, tokens(tt...), "erc1155 mint", true, "mintBatch", a.Addr, ids, vals)
		},
		func(i int, _ *ethgen.Account) error { return g.mintNFT(i, true) },
	} {
		for i, a := range g.acc {
			if err := step(i, a); err != nil {
				return err
			}
		}
		if err := g.commit(); err != nil {
			return err
		}
	}
	return nil
}

func (g *gen) mintNFT(to int, full bool) error {
	g.nextNFT++
	id, a := g.nextNFT, g.acc[to].Addr
	g.moves = append(g.moves, nftMove{id, to})
	return g.call(g.minter, g.nft, nil, nftC, tokens(erc721(g.nft, common.Address{}, a, id)), "erc721 mint", full, "mint", a, big.NewInt(id))
}

func erc20(c, from, to common.Address, v *big.Int) ethgen.TokenTransfer {
	return ethgen.TokenTransfer{Standard: ethgen.ERC20, Contract: c, From: from, To: to, Value: v}
}

func erc721(c, from, to common.Address, id int64) ethgen.TokenTransfer {
	return ethgen.TokenTransfer{Standard: ethgen.ERC721, Contract: c, From: from, To: to, Value: big.NewInt(1), TokenID: big.NewInt(id)}
}

func erc1155(c, from, to common.Address, id, v int64) ethgen.TokenTransfer {
	return ethgen.TokenTransfer{Standard: ethgen.ERC1155, Contract: c, From: from, To: to, Value: big.NewInt(v), TokenID: big.NewInt(id)}
}

func tokens(tt ...ethgen.TokenTransfer) ethgen.Effects { return ethgen.Effects{TokenTransfers: tt} }

func (g *gen) summary() *expect {
	h, hash := g.node.Head()
	e := &expect{Height: h, Head: hash, Blocks: g.blocks, Txs: len(g.l.Txs), Failed: g.failed, Kinds: g.kinds}
	for _, t := range g.l.Txs {
		e.TokenTransfers += len(t.TokenTransfers)
		e.InternalTransfers += len(t.InternalTransfers)
	}
	for _, a := range g.l.SortedAddresses() {
		x := g.l.Addresses[a]
		e.Addresses = append(e.Addresses, expectAddr{Addr: a, Name: x.Name, Balance: x.Balance, Nonce: x.Nonce,
			Txs: len(x.Txs), NonTokenTxs: x.NonTokenTxs, InternalTxs: x.InternalTxs})
	}
	return e
}

// safeTransfer3 is go-ethereum's name of the 3-argument safeTransferFrom
// overload of the NFT.
var safeTransfer3 = func() string {
	for name, m := range nftC.ABI.Methods {
		if m.RawName == "safeTransferFrom" && len(m.Inputs) == 3 {
			return name
		}
	}
	panic("NFT has no safeTransferFrom(from, to, id)")
}()
