package ethgen

import (
	"context"
	"embed"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// ENS's own contracts, from the bytecode ENS published on npm (see
// ens/README.md for the packages and their checksums).
//
//go:embed ens/*.json
var ensFS embed.FS

// Names of the ENS contracts.
const (
	ENSRegistryContract       = "ENSRegistry"
	ENSBaseRegistrarContract  = "BaseRegistrarImplementation"
	ENSPublicResolverContract = "PublicResolver"
)

// LoadENSContract returns one of ENS's published contracts.
func LoadENSContract(name string) (*Contract, error) {
	data, err := ensFS.ReadFile("ens/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("ethgen: no ENS contract %q", name)
	}
	return parseContract(name+".json", data)
}

// ENS is a deployment of ENS on a dev chain: the registry (its root owned
// by Owner), the .eth base registrar owning "eth" with Owner as its
// controller, and a public resolver.
type ENS struct {
	Registry, BaseRegistrar, Resolver common.Address
	Owner                             *Account
	w                                 *Wallet
	registry, registrar, resolver     *Contract
}

// ENSEthNode is the namehash of "eth"; Node(label) that of label.eth (the
// registrar registers second-level names only).
var ENSEthNode = crypto.Keccak256Hash(make([]byte, 32), crypto.Keccak256([]byte("eth")))

// Node is the namehash of label.eth.
func (e *ENS) Node(label string) common.Hash {
	return crypto.Keccak256Hash(ENSEthNode[:], crypto.Keccak256([]byte(label)))
}

// DeployENS sends the deployment and wiring txs; they take effect in the
// next block, in order.
func DeployENS(ctx context.Context, w *Wallet, owner *Account) (*ENS, error) {
	e := &ENS{Owner: owner, w: w}
	for _, c := range []struct {
		name string
		dst  **Contract
	}{{ENSRegistryContract, &e.registry}, {ENSBaseRegistrarContract, &e.registrar}, {ENSPublicResolverContract, &e.resolver}} {
		ct, err := LoadENSContract(c.name)
		if err != nil {
			return nil, err
		}
		*c.dst = ct
	}
	var err error
	if e.Registry, err = e.deploy(ctx, e.registry); err != nil {
		return nil, err
	}
	if e.BaseRegistrar, err = e.deploy(ctx, e.registrar, e.Registry, ENSEthNode); err != nil {
		return nil, err
	}
	if e.Resolver, err = e.deploy(ctx, e.resolver, e.Registry); err != nil {
		return nil, err
	}
	ethLabel := crypto.Keccak256Hash([]byte("eth"))
	if err := e.call(ctx, e.Registry, e.registry, "setSubnodeOwner", common.Hash{}, ethLabel, e.BaseRegistrar); err != nil {
		return nil, err
	}
	return e, e.call(ctx, e.BaseRegistrar, e.registrar, "addController", owner.Addr)
}

// Register sends the txs that register label.eth to the owner for
// duration seconds through the base registrar and point it, through the
// public resolver, at addr (the zero address: no resolver is set).
func (e *ENS) Register(ctx context.Context, label string, duration int64, addr common.Address) error {
	id := new(big.Int).SetBytes(crypto.Keccak256([]byte(label)))
	if err := e.call(ctx, e.BaseRegistrar, e.registrar, "register", id, e.Owner.Addr, big.NewInt(duration)); err != nil {
		return err
	}
	if addr == (common.Address{}) {
		return nil
	}
	node := e.Node(label)
	if err := e.call(ctx, e.Registry, e.registry, "setResolver", node, e.Resolver); err != nil {
		return err
	}
	// PublicResolver overloads setAddr; this is the address form.
	for name, m := range e.resolver.ABI.Methods {
		if m.Sig == "setAddr(bytes32,address)" {
			return e.call(ctx, e.Resolver, e.resolver, name, node, addr)
		}
	}
	return fmt.Errorf("ethgen: PublicResolver has no setAddr(bytes32,address)")
}

func (e *ENS) deploy(ctx context.Context, c *Contract, args ...any) (common.Address, error) {
	data, err := c.DeployData(args...)
	if err != nil {
		return common.Address{}, err
	}
	tx, err := e.w.Send(ctx, e.Owner, nil, data, TxOpts{Type: types.DynamicFeeTxType, Gas: 6_000_000})
	if err != nil {
		return common.Address{}, err
	}
	return crypto.CreateAddress(e.Owner.Addr, tx.Nonce()), nil
}

func (e *ENS) call(ctx context.Context, to common.Address, c *Contract, method string, args ...any) error {
	data, err := c.Calldata(method, args...)
	if err != nil {
		return err
	}
	_, err = e.w.Send(ctx, e.Owner, &to, data, TxOpts{Type: types.DynamicFeeTxType, Gas: 500_000})
	return err
}
