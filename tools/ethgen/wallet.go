package ethgen

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/crypto/kzg4844"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/params"
	"github.com/holiman/uint256"
)

// Account is a key with a readable name.
type Account struct {
	Name string
	Key  *ecdsa.PrivateKey
	Addr common.Address
}

// NewAccount derives the key of a named account from its name, so the
// same name gives the same address in every run.
func NewAccount(name string) *Account {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("ethgen/" + name)))
	if err != nil {
		panic(err) // a keccak hash is a valid key with overwhelming probability
	}
	return &Account{Name: name, Key: k, Addr: crypto.PubkeyToAddress(k.PublicKey)}
}

// AccountFromKey wraps an existing key (such as the dev account's).
func AccountFromKey(name string, k *ecdsa.PrivateKey) *Account {
	return &Account{Name: name, Key: k, Addr: crypto.PubkeyToAddress(k.PublicKey)}
}

// Default fees: the dev chain's base fee starts at 1 gwei and falls on
// empty blocks, so these are always enough.
var (
	DefaultTip      = big.NewInt(params.GWei)
	DefaultFeeCap   = big.NewInt(20 * params.GWei)
	DefaultGasPrice = big.NewInt(10 * params.GWei)
	DefaultBlobCap  = big.NewInt(params.GWei)
)

// Default gas limits when TxOpts.Gas is zero. Fixed limits instead of
// estimates, because a tx often depends on earlier ones not yet mined.
const (
	GasTransfer = 21_000
	GasCall     = 1_000_000
	GasDeploy   = 3_000_000
)

// TxOpts choose the tx type and its optional parts.
type TxOpts struct {
	Type       uint8 // types.LegacyTxType ... types.SetCodeTxType
	Value      *big.Int
	Gas        uint64
	AccessList types.AccessList             // types 1-4
	Auths      []types.SetCodeAuthorization // type 4
	Blobs      int                          // type 3: number of blobs
}

// Wallet signs and sends txs with nonces it tracks itself: txs from the
// same account can be sent back to back within one block, and a failed
// send does not leave a gap the node would have to fill.
type Wallet struct {
	Client  *ethclient.Client
	ChainID *big.Int
	Signer  types.Signer
	nonces  map[common.Address]uint64
}

// NewWallet reads the chain id from the node.
func NewWallet(ctx context.Context, client *ethclient.Client) (*Wallet, error) {
	id, err := client.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("ethgen: chain id: %w", err)
	}
	return &Wallet{Client: client, ChainID: id, Signer: types.LatestSignerForChainID(id), nonces: map[common.Address]uint64{}}, nil
}

// Nonce is the next nonce the wallet will use for addr; the first time it
// asks the node for the pending nonce.
func (w *Wallet) Nonce(ctx context.Context, addr common.Address) (uint64, error) {
	if n, ok := w.nonces[addr]; ok {
		return n, nil
	}
	n, err := w.Client.PendingNonceAt(ctx, addr)
	if err != nil {
		return 0, fmt.Errorf("ethgen: nonce of %s: %w", addr, err)
	}
	w.nonces[addr] = n
	return n, nil
}

// SetNonce overrides the next nonce of addr, e.g. after an EIP-7702
// authorization raised it on chain.
func (w *Wallet) SetNonce(addr common.Address, n uint64) { w.nonces[addr] = n }

// Build signs a tx from `from` to `to` (nil creates a contract) with the
// next nonce of `from` and reserves that nonce.
func (w *Wallet) Build(ctx context.Context, from *Account, to *common.Address, data []byte, o TxOpts) (*types.Transaction, error) {
	nonce, err := w.Nonce(ctx, from.Addr)
	if err != nil {
		return nil, err
	}
	value := o.Value
	if value == nil {
		value = new(big.Int)
	}
	gas := o.Gas
	if gas == 0 {
		switch {
		case to == nil:
			gas = GasDeploy
		case len(data) == 0 && o.Type != types.SetCodeTxType:
			gas = GasTransfer
		default:
			gas = GasCall
		}
	}
	var inner types.TxData
	switch o.Type {
	case types.LegacyTxType:
		inner = &types.LegacyTx{Nonce: nonce, GasPrice: DefaultGasPrice, Gas: gas, To: to, Value: value, Data: data}
	case types.AccessListTxType:
		inner = &types.AccessListTx{ChainID: w.ChainID, Nonce: nonce, GasPrice: DefaultGasPrice, Gas: gas, To: to, Value: value, Data: data, AccessList: o.AccessList}
	case types.DynamicFeeTxType:
		inner = &types.DynamicFeeTx{ChainID: w.ChainID, Nonce: nonce, GasTipCap: DefaultTip, GasFeeCap: DefaultFeeCap, Gas: gas, To: to, Value: value, Data: data, AccessList: o.AccessList}
	case types.BlobTxType:
		if to == nil || o.Blobs < 1 {
			return nil, errors.New("ethgen: a blob tx needs a recipient and at least one blob")
		}
		sidecar, err := makeSidecar(nonce, o.Blobs)
		if err != nil {
			return nil, err
		}
		inner = &types.BlobTx{
			ChainID: uint256.MustFromBig(w.ChainID), Nonce: nonce,
			GasTipCap: uint256.MustFromBig(DefaultTip), GasFeeCap: uint256.MustFromBig(DefaultFeeCap),
			Gas: gas, To: *to, Value: uint256.MustFromBig(value), Data: data, AccessList: o.AccessList,
			BlobFeeCap: uint256.MustFromBig(DefaultBlobCap), BlobHashes: sidecar.BlobHashes(), Sidecar: sidecar,
		}
	case types.SetCodeTxType:
		if to == nil || len(o.Auths) == 0 {
			return nil, errors.New("ethgen: a set-code tx needs a recipient and authorizations")
		}
		inner = &types.SetCodeTx{
			ChainID: uint256.MustFromBig(w.ChainID), Nonce: nonce,
			GasTipCap: uint256.MustFromBig(DefaultTip), GasFeeCap: uint256.MustFromBig(DefaultFeeCap),
			Gas: gas, To: *to, Value: uint256.MustFromBig(value), Data: data, AccessList: o.AccessList,
			AuthList: o.Auths,
		}
	default:
		return nil, fmt.Errorf("ethgen: unknown tx type %d", o.Type)
	}
	tx, err := types.SignNewTx(from.Key, w.Signer, inner)
	if err != nil {
		return nil, err
	}
	w.nonces[from.Addr] = nonce + 1
	return tx, nil
}

// Send builds a tx and submits it to the node's pool.
func (w *Wallet) Send(ctx context.Context, from *Account, to *common.Address, data []byte, o TxOpts) (*types.Transaction, error) {
	tx, err := w.Build(ctx, from, to, data, o)
	if err != nil {
		return nil, err
	}
	if err := w.Client.SendTransaction(ctx, tx); err != nil {
		// The node did not take the nonce: give it back.
		w.nonces[from.Addr] = tx.Nonce()
		return nil, fmt.Errorf("ethgen: send type %d tx from %s nonce %d: %w", o.Type, from.Name, tx.Nonce(), err)
	}
	return tx, nil
}

// Transfer sends plain value.
func (w *Wallet) Transfer(ctx context.Context, from *Account, to common.Address, value *big.Int, txType uint8) (*types.Transaction, error) {
	return w.Send(ctx, from, &to, nil, TxOpts{Type: txType, Value: value})
}

// Deploy sends a type 2 contract creation and returns the tx and the
// address the contract will have.
func (w *Wallet) Deploy(ctx context.Context, from *Account, c *Contract, args ...any) (*types.Transaction, common.Address, error) {
	data, err := c.DeployData(args...)
	if err != nil {
		return nil, common.Address{}, err
	}
	tx, err := w.Send(ctx, from, nil, data, TxOpts{Type: types.DynamicFeeTxType})
	if err != nil {
		return nil, common.Address{}, err
	}
	return tx, crypto.CreateAddress(from.Addr, tx.Nonce()), nil
}

// Call sends a type 2 tx calling method on the contract at `to`.
func (w *Wallet) Call(ctx context.Context, from *Account, to common.Address, value *big.Int, c *Contract, method string, args ...any) (*types.Transaction, error) {
	data, err := c.Calldata(method, args...)
	if err != nil {
		return nil, err
	}
	return w.Send(ctx, from, &to, data, TxOpts{Type: types.DynamicFeeTxType, Value: value})
}

// Authorize signs an EIP-7702 authorization delegating authority's code
// to delegate. It uses (and reserves) authority's next nonce, which is
// right when another account sends the set-code tx (a self-sponsored one
// would need the tx nonce + 1, as the sender's nonce is raised first).
func (w *Wallet) Authorize(ctx context.Context, authority *Account, delegate common.Address) (types.SetCodeAuthorization, error) {
	nonce, err := w.Nonce(ctx, authority.Addr)
	if err != nil {
		return types.SetCodeAuthorization{}, err
	}
	auth, err := types.SignSetCode(authority.Key, types.SetCodeAuthorization{
		ChainID: *uint256.MustFromBig(w.ChainID), Address: delegate, Nonce: nonce,
	})
	if err != nil {
		return auth, err
	}
	w.nonces[authority.Addr] = nonce + 1
	return auth, nil
}

// makeSidecar builds a version 1 (cell proof, EIP-7594) sidecar, what the
// pool requires from Osaka on, with deterministic blob contents.
func makeSidecar(seed uint64, n int) (*types.BlobTxSidecar, error) {
	var (
		blobs   = make([]kzg4844.Blob, n)
		commits = make([]kzg4844.Commitment, n)
		proofs  []kzg4844.Proof
	)
	for i := range blobs {
		// Keep each 32-byte field element below the BLS modulus: first byte 0.
		for j := 0; j < len(blobs[i]); j += 32 {
			blobs[i][j+1] = byte(seed)
			blobs[i][j+2] = byte(i)
			blobs[i][j+31] = byte(j / 32)
		}
		c, err := kzg4844.BlobToCommitment(&blobs[i])
		if err != nil {
			return nil, err
		}
		commits[i] = c
		p, err := kzg4844.ComputeCellProofs(&blobs[i])
		if err != nil {
			return nil, err
		}
		proofs = append(proofs, p...)
	}
	return types.NewBlobTxSidecar(types.BlobSidecarVersion1, blobs, commits, proofs), nil
}
