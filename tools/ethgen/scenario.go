package ethgen

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// AccountNames are the scenario's accounts, funded from the dev account.
// "ghost" only ever receives value in reverted frames, so it must end with
// no txs; "frank" gets its code set (EIP-7702) to the Splitter.
var AccountNames = []string{"alice", "bob", "carol", "dave", "erin", "frank", "ghost"}

// Token parameters the scenario deploys with.
var (
	TokenName, TokenSymbol = "Ethgen Token", "EGT"
	B32Name, B32Symbol     = "Bytes32 Token", "B32T"
	NFTName, NFTSymbol     = "Ethgen NFT", "ENFT"
	tokenSupply            = ether(1_000_000)
	b32Supply              = ether(21_000)
	fundAmount             = ether(100)
	splitValue             = new(big.Int).Add(ether(3), big.NewInt(1)) // remainder goes to the last recipient
	childValue             = ether(2)
	revertValue            = big.NewInt(params.Ether / 2)
	failedValue            = big.NewInt(params.Ether / 4)
)

func ether(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether)) }

// run is the state of one Scenario run.
type run struct {
	ctx   context.Context
	node  *gethdev.Node
	w     *Wallet
	l     *Ledger
	dev   *Account
	acc   map[string]*Account
	batch []pendingTx
	// addresses of deployed contracts by kind
	token, b32, nft, multi, splitter, reverter, factory, child common.Address
}

type pendingTx struct {
	tx   *types.Transaction
	from common.Address
	eff  Effects
}

// Scenario runs a fixed sequence of blocks on node and returns the ledger
// of what it did. The node should be fresh (Start with default options),
// though the ledger reads starting balances and nonces from it. Blocks:
//
//  1. funding of the accounts from the dev account (legacy, 2930 and 1559 txs)
//  2. contract deployments and plain transfers
//  3. token mints and transfers, Splitter internal transfers
//  4. token transfers of every standard, reverted inner transfer, failed
//     txs (status 0), factory creation with value
//  5. selfdestruct, blob tx (type 3), set-code tx (type 4), legacy token call
//
// and finally two txs are left pending in the pool (so gethdev's Fork fails
// until they are mined). A blob or set-code tx the node rejects is an error:
// the dev chain supports both. The blob tx makes the first run in a process
// about 2.5s slower (KZG setup and cell proofs). On error the ledger built
// so far is returned with it.
func Scenario(ctx context.Context, node *gethdev.Node) (*Ledger, error) {
	w, err := NewWallet(ctx, node.Client())
	if err != nil {
		return nil, err
	}
	r := &run{ctx: ctx, node: node, w: w, l: NewLedger(w.ChainID, node.Coinbase),
		dev: AccountFromKey("dev", node.DevKey), acc: map[string]*Account{}}
	track := []*Account{r.dev, {Name: "coinbase", Addr: node.Coinbase}}
	for _, n := range AccountNames {
		r.acc[n] = NewAccount(n)
		track = append(track, r.acc[n])
	}
	for _, a := range track {
		bal, err := node.Client().BalanceAt(ctx, a.Addr, nil)
		if err != nil {
			return nil, err
		}
		nonce, err := node.Client().NonceAt(ctx, a.Addr, nil)
		if err != nil {
			return nil, err
		}
		r.l.Track(a.Name, a.Addr, bal, nonce)
	}
	for _, step := range []func() error{r.block1, r.block2, r.block3, r.block4, r.block5, r.leavePending} {
		if err := step(); err != nil {
			return r.l, err
		}
	}
	return r.l, nil
}

// send submits a tx for the next block and remembers its expected effects.
func (r *run) send(from *Account, to *common.Address, data []byte, o TxOpts, eff Effects) (*types.Transaction, error) {
	tx, err := r.w.Send(r.ctx, from, to, data, o)
	if err != nil {
		return nil, err
	}
	r.batch = append(r.batch, pendingTx{tx, from.Addr, eff})
	return tx, nil
}

// call sends a type 2 contract call.
func (r *run) call(from *Account, to common.Address, value *big.Int, c *Contract, eff Effects, method string, args ...any) error {
	return r.callType(types.DynamicFeeTxType, from, to, value, c, eff, method, args...)
}

func (r *run) callType(typ uint8, from *Account, to common.Address, value *big.Int, c *Contract, eff Effects, method string, args ...any) error {
	data, err := c.Calldata(method, args...)
	if err != nil {
		return err
	}
	_, err = r.send(from, &to, data, TxOpts{Type: typ, Value: value}, eff)
	return err
}

func (r *run) transfer(typ uint8, from *Account, to common.Address, value *big.Int) error {
	_, err := r.send(from, &to, nil, TxOpts{Type: typ, Value: value}, Effects{})
	return err
}

func (r *run) deploy(from *Account, kind string, info *ContractInfo, args ...any) (common.Address, error) {
	c := MustContract(kind)
	data, err := c.DeployData(args...)
	if err != nil {
		return common.Address{}, err
	}
	if info == nil {
		info = &ContractInfo{}
	}
	info.Kind = kind
	tx, err := r.send(from, nil, data, TxOpts{Type: types.DynamicFeeTxType}, Effects{Contract: info})
	if err != nil {
		return common.Address{}, err
	}
	return ContractAddress(from.Addr, tx.Nonce()), nil
}

// commit seals the batch into a block and applies the receipts to the
// ledger.
func (r *run) commit() error {
	hash, err := r.node.Commit()
	if err != nil {
		return err
	}
	header, err := r.node.Client().HeaderByHash(r.ctx, hash)
	if err != nil {
		return err
	}
	b := Block{Number: header.Number.Uint64(), Hash: hash}
	for _, p := range r.batch {
		rc, err := r.node.Client().TransactionReceipt(r.ctx, p.tx.Hash())
		if err != nil {
			// Say whether the node left the tx in the pool or dropped it.
			_, pending, _ := r.node.Client().TransactionByHash(r.ctx, p.tx.Hash())
			return fmt.Errorf("ethgen: block %d: receipt of type %d tx %s from %s nonce %d (in pool: %v): %w",
				b.Number, p.tx.Type(), p.tx.Hash(), p.from, p.tx.Nonce(), pending, err)
		}
		if rc.BlockHash != hash {
			return fmt.Errorf("ethgen: tx %s not in block %d", p.tx.Hash(), b.Number)
		}
		if err := r.l.Apply(p.tx, p.from, rc, header.BaseFee, p.eff); err != nil {
			return fmt.Errorf("ethgen: block %d: %w", b.Number, err)
		}
		b.Txs = append(b.Txs, p.tx.Hash())
	}
	r.batch = nil
	r.l.Blocks = append(r.l.Blocks, b)
	return nil
}

func (r *run) a(name string) *Account { return r.acc[name] }

// block1 funds every account with one tx of each basic type.
func (r *run) block1() error {
	kinds := []uint8{types.LegacyTxType, types.AccessListTxType, types.DynamicFeeTxType}
	for i, n := range AccountNames {
		if n == "ghost" {
			continue
		}
		if err := r.transfer(kinds[i%len(kinds)], r.dev, r.a(n).Addr, fundAmount); err != nil {
			return err
		}
	}
	return r.commit()
}

// block2 deploys the contracts; plain transfers between accounts ride along.
func (r *run) block2() (err error) {
	alice, bob := r.a("alice"), r.a("bob")
	deploys := []struct {
		addr *common.Address
		from *Account
		kind string
		info *ContractInfo
		args []any
	}{
		{&r.token, alice, TokenContract, &ContractInfo{Name: TokenName, Symbol: TokenSymbol, Decimals: 18, Standard: ERC20},
			[]any{TokenName, TokenSymbol, tokenSupply}},
		{&r.b32, alice, Bytes32TokenContract, &ContractInfo{Name: B32Name, Symbol: B32Symbol, Decimals: 18, Standard: ERC20},
			[]any{Bytes32String(B32Name), Bytes32String(B32Symbol), b32Supply}},
		{&r.nft, alice, NFTContract, &ContractInfo{Name: NFTName, Symbol: NFTSymbol, Standard: ERC721},
			[]any{NFTName, NFTSymbol}},
		{&r.multi, alice, MultiTokenContract, &ContractInfo{Standard: ERC1155}, nil},
		{&r.splitter, bob, SplitterContract, nil, nil},
		{&r.reverter, bob, ReverterContract, nil, nil},
		{&r.factory, bob, FactoryContract, nil, nil},
	}
	for _, d := range deploys {
		if *d.addr, err = r.deploy(d.from, d.kind, d.info, d.args...); err != nil {
			return err
		}
	}
	if err := r.transfer(types.LegacyTxType, alice, bob.Addr, ether(1)); err != nil {
		return err
	}
	if err := r.transfer(types.DynamicFeeTxType, r.a("carol"), r.a("dave").Addr, ether(2)); err != nil {
		return err
	}
	// Mints that the token constructors did.
	r.batch[0].eff.TokenTransfers = []TokenTransfer{erc20(r.token, common.Address{}, alice.Addr, tokenSupply)}
	r.batch[1].eff.TokenTransfers = []TokenTransfer{erc20(r.b32, common.Address{}, alice.Addr, b32Supply)}
	return r.commit()
}

func erc20(c, from, to common.Address, v *big.Int) TokenTransfer {
	return TokenTransfer{Standard: ERC20, Contract: c, From: from, To: to, Value: v}
}

func erc721(c, from, to common.Address, id int64) TokenTransfer {
	return TokenTransfer{Standard: ERC721, Contract: c, From: from, To: to, Value: big.NewInt(1), TokenID: big.NewInt(id)}
}

func erc1155(c, from, to common.Address, id, v int64) TokenTransfer {
	return TokenTransfer{Standard: ERC1155, Contract: c, From: from, To: to, Value: big.NewInt(v), TokenID: big.NewInt(id)}
}

func tokens(tt ...TokenTransfer) Effects { return Effects{TokenTransfers: tt} }

func big64s(vs ...int64) []*big.Int {
	out := make([]*big.Int, len(vs))
	for i, v := range vs {
		out[i] = big.NewInt(v)
	}
	return out
}
