package ethgen

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// overload finds the ABI name of method with n inputs (go-ethereum names
// overloads "m", "m0", ... in ABI order).
func overload(c *Contract, method string, n int) string {
	for name, m := range c.ABI.Methods {
		if m.RawName == method && len(m.Inputs) == n {
			return name
		}
	}
	panic(fmt.Sprintf("ethgen: %s has no %s with %d inputs", c.Name, method, n))
}

// block3 mints and moves tokens and splits value through internal calls.
func (r *run) block3() error {
	alice, bob, carol, dave, erin := r.a("alice"), r.a("bob"), r.a("carol"), r.a("dave"), r.a("erin")
	tok, b32, nft, multi := MustContract(TokenContract), MustContract(Bytes32TokenContract), MustContract(NFTContract), MustContract(MultiTokenContract)
	steps := []error{
		r.call(alice, r.token, nil, tok, tokens(erc20(r.token, alice.Addr, bob.Addr, ether(1000))), "transfer", bob.Addr, ether(1000)),
		r.call(alice, r.token, nil, tok, tokens(erc20(r.token, alice.Addr, carol.Addr, ether(500))), "transfer", carol.Addr, ether(500)),
		r.call(alice, r.b32, nil, b32, tokens(erc20(r.b32, alice.Addr, dave.Addr, ether(42))), "transfer", dave.Addr, ether(42)),
		r.call(alice, r.nft, nil, nft, tokens(erc721(r.nft, common.Address{}, bob.Addr, 1)), "mint", bob.Addr, big.NewInt(1)),
		r.call(alice, r.nft, nil, nft, tokens(erc721(r.nft, common.Address{}, carol.Addr, 2)), "mint", carol.Addr, big.NewInt(2)),
		r.call(alice, r.nft, nil, nft, tokens(erc721(r.nft, common.Address{}, alice.Addr, 3)), "mint", alice.Addr, big.NewInt(3)),
		r.call(alice, r.multi, nil, multi, tokens(erc1155(r.multi, common.Address{}, carol.Addr, 7, 100)),
			"mint", carol.Addr, big.NewInt(7), big.NewInt(100)),
		r.call(alice, r.multi, nil, multi, tokens(
			erc1155(r.multi, common.Address{}, dave.Addr, 1, 10),
			erc1155(r.multi, common.Address{}, dave.Addr, 2, 20),
			erc1155(r.multi, common.Address{}, dave.Addr, 3, 30)),
			"mintBatch", dave.Addr, big64s(1, 2, 3), big64s(10, 20, 30)),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	// Splitter: erin's value reaches alice, bob and carol in inner calls.
	to := []common.Address{alice.Addr, bob.Addr, carol.Addr}
	part := new(big.Int).Div(splitValue, big.NewInt(int64(len(to))))
	last := new(big.Int).Sub(splitValue, new(big.Int).Mul(part, big.NewInt(int64(len(to)-1))))
	eff := Effects{Internal: []InternalTransfer{
		{InternalCall, r.splitter, alice.Addr, part},
		{InternalCall, r.splitter, bob.Addr, new(big.Int).Set(part)},
		{InternalCall, r.splitter, carol.Addr, last},
	}}
	if err := r.call(erin, r.splitter, splitValue, MustContract(SplitterContract), eff, "split", to); err != nil {
		return err
	}
	return r.commit()
}

// block4 moves tokens of every standard, reverts inner value transfers,
// fails two txs and creates a contract from a contract.
func (r *run) block4() error {
	alice, bob, carol, dave, erin, ghost := r.a("alice"), r.a("bob"), r.a("carol"), r.a("dave"), r.a("erin"), r.a("ghost")
	tok, nft, multi, rev := MustContract(TokenContract), MustContract(NFTContract), MustContract(MultiTokenContract), MustContract(ReverterContract)

	// An EIP-2930 token transfer naming the token's storage in the access list.
	data := tok.MustCalldata("transfer", carol.Addr, ether(250))
	al := types.AccessList{{Address: r.token, StorageKeys: []common.Hash{}}}
	if _, err := r.send(bob, &r.token, data, TxOpts{Type: types.AccessListTxType, AccessList: al},
		tokens(erc20(r.token, bob.Addr, carol.Addr, ether(250)))); err != nil {
		return err
	}
	child := crypto.CreateAddress(r.factory, r.l.Addr(r.factory).Nonce)
	r.child = child
	steps := []error{
		r.call(bob, r.nft, nil, nft, tokens(erc721(r.nft, bob.Addr, carol.Addr, 1)), "transferFrom", bob.Addr, carol.Addr, big.NewInt(1)),
		r.call(alice, r.nft, nil, nft, tokens(erc721(r.nft, alice.Addr, dave.Addr, 3)),
			overload(nft, "safeTransferFrom", 3), alice.Addr, dave.Addr, big.NewInt(3)),
		r.call(carol, r.multi, nil, multi, tokens(erc1155(r.multi, carol.Addr, alice.Addr, 7, 40)),
			"safeTransferFrom", carol.Addr, alice.Addr, big.NewInt(7), big.NewInt(40), []byte{}),
		r.call(dave, r.multi, nil, multi, tokens(erc1155(r.multi, dave.Addr, erin.Addr, 1, 5), erc1155(r.multi, dave.Addr, erin.Addr, 3, 15)),
			"safeBatchTransferFrom", dave.Addr, erin.Addr, big64s(1, 3), big64s(5, 15), []byte{}),
		// Succeeds, but the inner frames moving the value to ghost revert:
		// the Reverter keeps the value and ghost sees nothing.
		r.call(carol, r.reverter, revertValue, rev, Effects{}, "tryInner", ghost.Addr),
		// Reverts as a whole: status 0, only the fee is paid.
		r.call(dave, r.reverter, failedValue, rev, Effects{Fails: true}, "sendThenRevert", ghost.Addr),
		// A token transfer above the balance: status 0.
		r.call(bob, r.token, nil, tok, Effects{Fails: true}, "transfer", alice.Addr, ether(1_000_000)),
		// CREATE inside a call, passing the value on to the child.
		r.call(erin, r.factory, childValue, MustContract(FactoryContract), Effects{
			Internal: []InternalTransfer{{InternalCreate, r.factory, child, childValue}},
			Created:  child,
			Contract: &ContractInfo{Kind: ChildContract},
		}, "create"),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	return r.commit()
}

// block5 destroys the child, and sends a blob tx, a set-code tx and a
// legacy token call.
func (r *run) block5() error {
	alice, bob, carol, dave, erin, frank := r.a("alice"), r.a("bob"), r.a("carol"), r.a("dave"), r.a("erin"), r.a("frank")
	// SELFDESTRUCT of a contract from an earlier tx: the code stays
	// (EIP-6780) but the whole balance moves to the beneficiary.
	bal := new(big.Int).Set(r.l.Addr(r.child).Balance)
	if err := r.call(erin, r.child, nil, MustContract(ChildContract), Effects{
		Internal: []InternalTransfer{{InternalSelfDestruct, r.child, alice.Addr, bal}},
	}, "destroy", alice.Addr); err != nil {
		return err
	}
	// EIP-4844 blob tx carrying value.
	if _, err := r.send(bob, &carol.Addr, nil, TxOpts{Type: types.BlobTxType, Blobs: 1, Value: big.NewInt(12345), Gas: 21000}, Effects{}); err != nil {
		return fmt.Errorf("blob tx: %w", err)
	}
	// EIP-7702: alice sponsors a tx that sets frank's code to the Splitter
	// and calls it with value: frank's new code forwards it to bob and dave
	// in inner calls from frank's address.
	auth, err := r.w.Authorize(r.ctx, frank, r.splitter)
	if err != nil {
		return err
	}
	value := ether(1)
	half := new(big.Int).Div(value, big.NewInt(2))
	data := MustContract(SplitterContract).MustCalldata("split", []common.Address{bob.Addr, dave.Addr})
	if _, err := r.send(alice, &frank.Addr, data, TxOpts{Type: types.SetCodeTxType, Value: value, Auths: []types.SetCodeAuthorization{auth}},
		Effects{Delegations: []common.Address{frank.Addr}, Internal: []InternalTransfer{
			{InternalCall, frank.Addr, bob.Addr, half},
			{InternalCall, frank.Addr, dave.Addr, new(big.Int).Sub(value, half)},
		}}); err != nil {
		return fmt.Errorf("set-code tx: %w", err)
	}
	// A legacy tx calling a token.
	if err := r.callType(types.LegacyTxType, carol, r.token, nil, MustContract(TokenContract),
		tokens(erc20(r.token, carol.Addr, dave.Addr, ether(100))), "transfer", dave.Addr, ether(100)); err != nil {
		return err
	}
	return r.commit()
}

// leavePending sends a value transfer and a token transfer and does not
// mine them.
func (r *run) leavePending() error {
	alice, carol, erin := r.a("alice"), r.a("carol"), r.a("erin")
	tx, err := r.w.Transfer(r.ctx, alice, erin.Addr, ether(1), types.DynamicFeeTxType)
	if err != nil {
		return err
	}
	r.l.AddPending(tx, alice.Addr, Effects{})
	tx, err = r.w.Call(r.ctx, carol, r.token, nil, MustContract(TokenContract), "transfer", alice.Addr, ether(1))
	if err != nil {
		return err
	}
	r.l.AddPending(tx, carol.Addr, tokens(erc20(r.token, carol.Addr, alice.Addr, ether(1))))
	return nil
}
