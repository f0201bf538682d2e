package api

import (
	"context"
	"encoding/hex"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/openexplorer/blockbook/bchain"
)

// ENS forward resolution, as Blockbook does it: a name ending in ".eth"
// given where an address is expected (address/{name}, getAccountInfo,
// the explorer's search) is checked against the .eth base registrar's
// nameExpires of its second-level label (an expired name is refused, the
// grace period is not counted), then resolved through the registry's
// resolver(node) and the resolver's addr(node), read at the node's
// latest block. Blockbook knows mainnet's contracts only; ens_registry and
// ens_base_registrar (our config keys) name them on other chains.

// ENSContracts are the ENS registry and the .eth base registrar.
type ENSContracts struct {
	Registry, BaseRegistrar common.Address
}

// ENSMainnet are Ethereum mainnet's contracts, Blockbook's constants.
var ENSMainnet = ENSContracts{
	Registry:      common.HexToAddress("0x00000000000C2E074eC69A0dFb2997BA6C7d2e1e"),
	BaseRegistrar: common.HexToAddress("0x57f1887a8BF19b14fC0dF6Fd9B2acc9Af147eA85"),
}

// The selectors Blockbook calls: registry resolver(bytes32), resolver
// addr(bytes32), base registrar nameExpires(uint256).
var (
	ensResolverSel    = []byte{0x01, 0x78, 0xb8, 0xbf}
	ensAddrSel        = []byte{0x3b, 0x3b, 0x57, 0xde}
	ensNameExpiresSel = []byte{0xd6, 0xe4, 0xfa, 0x86}
)

// maxENSName bounds a name (DNS's limit); longer input is refused unread.
const maxENSName = 255

// IsENSName reports whether s is asked as an ENS name (Blockbook: any
// string ending in ".eth", in any case).
func IsENSName(s string) bool {
	return strings.HasSuffix(strings.ToLower(strings.TrimSpace(s)), ".eth")
}

// ENSNameHash is ENS's namehash of a (lower-cased) name.
func ENSNameHash(name string) common.Hash {
	var node common.Hash
	if name == "" {
		return node
	}
	labels := strings.Split(name, ".")
	for i := len(labels) - 1; i >= 0; i-- {
		node = crypto.Keccak256Hash(node[:], crypto.Keccak256([]byte(labels[i])))
	}
	return node
}

// ensContracts are the contracts of this chain: the configured ones, else
// mainnet's on chain id 1 (not a testnet), else none.
func (s *EthService) ensContracts(ctx context.Context) (*ENSContracts, error) {
	if s.cfg.ENS != nil {
		return s.cfg.ENS, nil
	}
	if s.tron != nil || s.eth == nil || s.backend.Params.Testnet {
		return nil, nil
	}
	id, err := s.eth.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	if id.IsUint64() && id.Uint64() == 1 {
		return &ENSMainnet, nil
	}
	return nil, nil
}

// ResolveENS returns the address (checksummed) an unexpired .eth name
// resolves to; a name that is unknown, expired or resolves to nothing is
// a user error with Blockbook's text.
func (s *EthService) ResolveENS(ctx context.Context, name string) (string, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if len(name) > maxENSName || !IsENSName(name) || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return "", userErr("Invalid ENS name '%s'", truncate(name, 100))
	}
	c, err := s.ensContracts(ctx)
	if err != nil {
		return "", err
	}
	if c == nil {
		return "", userErr("ENS is not supported on this network")
	}
	notFound := &Error{Msg: "ENS name not found", Err: ErrNotFound}
	// The base registrar knows second-level names: a subdomain's expiry
	// is its parent's.
	labels := strings.Split(strings.TrimSuffix(name, ".eth"), ".")
	label := labels[len(labels)-1]
	word, err := s.ensCall(ctx, c.BaseRegistrar, ensNameExpiresSel, crypto.Keccak256Hash([]byte(label)))
	if err != nil {
		return "", err
	}
	expires := new(big.Int).SetBytes(word[:])
	// A name never registered has no expiry (Blockbook calls it expired).
	if expires.Sign() == 0 {
		return "", notFound
	}
	if big.NewInt(time.Now().Unix()).Cmp(expires) > 0 {
		return "", userErr("ENS name expired")
	}
	node := ENSNameHash(name)
	if word, err = s.ensCall(ctx, c.Registry, ensResolverSel, node); err != nil {
		return "", err
	}
	resolver := common.BytesToAddress(word[12:])
	if resolver == (common.Address{}) {
		return "", notFound
	}
	if word, err = s.ensCall(ctx, resolver, ensAddrSel, node); err != nil {
		return "", err
	}
	addr := common.BytesToAddress(word[12:])
	if addr == (common.Address{}) {
		return "", notFound
	}
	return addr.Hex(), nil
}

// accountDesc is the address an account is asked by: an ENS name's
// address, else the address itself.
func (s *EthService) accountDesc(ctx context.Context, address string) (bchain.AddrDesc, error) {
	if s.tron == nil && IsENSName(address) {
		resolved, err := s.ResolveENS(ctx, address)
		if err != nil {
			return nil, err
		}
		address = resolved
	}
	return s.addrDesc(address)
}

// ensCall calls a one-word method at the latest block; a revert or a
// short answer (no contract there) means the name is not found.
func (s *EthService) ensCall(ctx context.Context, to common.Address, sel []byte, arg common.Hash) (common.Hash, error) {
	out, err := s.eth.Call(ctx, bchain.EthCall{To: bchain.AddrDesc(to.Bytes()), Data: append(append([]byte{}, sel...), arg[:]...)})
	// A revert (geth's code 3, or its message elsewhere): no ENS record
	// there. Any other node error stays the node's, not the user's.
	if isRevert(err) { // eth_tokens.go
		return common.Hash{}, &Error{Msg: "ENS name not found", Err: err}
	}
	if err != nil {
		return common.Hash{}, err
	}
	if len(out) < 32 {
		s.log.Debug("ENS call answered short", "to", to.Hex(), "sel", hex.EncodeToString(sel), "len", len(out))
		return common.Hash{}, &Error{Msg: "ENS name not found", Err: ErrNotFound}
	}
	return common.BytesToHash(out[len(out)-32:]), nil
}
