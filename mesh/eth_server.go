package mesh

import (
	"context"
	"strings"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// The Data API of Ethereum-type chains (eth_*.go): the same front and
// wire objects as the Bitcoin-type one, with account-model operations
// (eth_block.go), balances of ETH and ERC-20 tokens at any block
// (eth_account.go), and no coins and no construction.

// Operation types of Ethereum-type chains: every balance change of a tx.
const (
	opFee            = "FEE"             // gas used × effective gas price (+ blob and L1 fees), paid by the sender
	opPriorityFee    = "PRIORITY_FEE"    // gas used × (price − base fee), to the block's fee recipient
	opBaseFee        = "BASE_FEE"        // gas used × base fee, to the base fee vault of an OP-stack chain (burnt elsewhere)
	opL1Fee          = "L1_FEE"          // an OP-stack tx's L1 data fee, to the L1 fee vault
	opCall           = "CALL"            // the tx's own value transfer
	opCreate         = "CREATE"          // the value a contract creation endows
	opInternalCall   = "INTERNAL_CALL"   // value moved by an inner call frame (from our traces)
	opInternalCreate = "INTERNAL_CREATE" // the value a contract created by a contract receives
	opSelfDestruct   = "SELFDESTRUCT"    // a destructed contract's balance to its beneficiary
	opERC20          = "ERC20_TRANSFER"  // an ERC-20 Transfer event
)

var ethOperationTypes = []string{opFee, opPriorityFee, opBaseFee, opL1Fee, opCall, opCreate,
	opInternalCall, opInternalCreate, opSelfDestruct, opERC20, opWithdrawal}

// OP-stack fee vaults (the OP-stack specification's predeploys): the base
// fee and the L1 data fee are paid to them, not burnt.
var (
	opBaseFeeVault = bchain.EthAddress{0x42, 18: 0x00, 19: 0x19}
	opL1FeeVault   = bchain.EthAddress{0x42, 18: 0x00, 19: 0x1a}
)

// NewEth builds the front over an Ethereum-type chain's service.
func NewEth(svc api.Service, eth api.EthLedgerQueries, opts Options) *Server {
	s := New(svc, nil, nil, opts)
	s.idx, s.eth = eth, eth
	for p, h := range map[string]func(context.Context, []byte) (any, error){
		"/network/options":     s.ethNetworkOptions,
		"/block":               s.ethBlock,
		"/block/transaction":   s.ethBlockTransaction,
		"/mempool":             s.ethMempool,
		"/mempool/transaction": s.ethMempoolTransaction,
		"/account/balance":     s.ethAccountBalance,
		"/account/coins":       s.ethAccountCoins,
	} {
		s.routes[p] = h
	}
	// Ethereum-type construction is not served (docs/api.md), nor /call.
	for p := range s.routes {
		if strings.HasPrefix(p, "/construction/") || p == "/call" {
			s.routes[p] = func(context.Context, []byte) (any, error) {
				return nil, fail(errNotImplemented, "%s is not served on Ethereum-type chains", p)
			}
		}
	}
	return s
}

func (s *Server) ethNetworkOptions(ctx context.Context, body []byte) (any, error) {
	out, err := s.networkOptions(ctx, body)
	if err != nil {
		return nil, err
	}
	o := out.(*networkOptionsResponse)
	o.Allow.OperationTypes = ethOperationTypes
	o.Allow.MempoolCoins = false
	o.Allow.CallMethods = []string{} // /call is not served here
	return o, nil
}

func (s *Server) ethAccountCoins(_ context.Context, body []byte) (any, error) {
	var req accountCoinsRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	return nil, fail(errNotImplemented, "/account/coins is for UTXO chains; this chain keeps account balances (/account/balance)")
}

// ethAccount reads an account identifier: an address, and in the
// sub-account an ERC-20 contract to ask only that token's balance of.
func (s *Server) ethAccount(a *AccountIdentifier) (desc bchain.AddrDesc, token *bchain.EthAddress, err error) {
	if a == nil {
		return nil, nil, fail(errBadRequest, "account_identifier is required")
	}
	if desc, err = s.ethAddress(a.Address); err != nil {
		return nil, nil, err
	}
	if a.SubAccount != nil {
		c, err := s.ethAddress(a.SubAccount.Address)
		if err != nil {
			return nil, nil, fail(errBadAccount, "sub_account %q is not a token contract address", truncate(a.SubAccount.Address, 80))
		}
		token = new(bchain.EthAddress)
		copy(token[:], c)
	}
	return desc, token, nil
}

func (s *Server) ethAddress(a string) (bchain.AddrDesc, error) {
	desc, err := s.svc.AddrDesc(a)
	if err != nil || len(desc) != len(bchain.EthAddress{}) {
		return nil, failWith(errBadAccount, err, "%q is not an address of this chain", truncate(a, 80))
	}
	return desc, nil
}

// ethAcct renders an address as its account (EIP-55).
func (s *Server) ethAcct(a bchain.EthAddress) *AccountIdentifier {
	if addr, ok := s.svc.DescAddress(a[:]); ok {
		return &AccountIdentifier{Address: addr}
	}
	return &AccountIdentifier{Address: a.String()}
}

// tokenCurrency is an ERC-20's Mesh currency: its symbol (the contract
// address when it has none) and decimals, with the contract in metadata,
// which identifies it.
func (s *Server) tokenCurrency(c bchain.EthAddress, info *bchain.EthContractInfo) *Currency {
	contract := s.ethAcct(c).Address
	cur := &Currency{Symbol: contract, Metadata: map[string]any{"contract": contract}}
	if info != nil {
		cur.Decimals = info.Decimals
		if info.Symbol != "" {
			cur.Symbol = info.Symbol
		}
	}
	return cur
}

// ethCurrencies reads a currencies filter: the chain's coin (wantWei) and
// ERC-20 contracts (by metadata.contract).
func (s *Server) ethCurrencies(cs []Currency) (wantWei bool, tokens map[bchain.EthAddress]Currency, err error) {
	tokens = map[bchain.EthAddress]Currency{}
	for _, c := range cs {
		contract, ok := c.Metadata["contract"].(string)
		if !ok {
			if err := s.checkCurrencies([]Currency{c}); err != nil {
				return false, nil, err
			}
			wantWei = true
			continue
		}
		desc, err := s.ethAddress(contract)
		if err != nil {
			return false, nil, fail(errBadCurrency, "metadata.contract %q is not a contract address", truncate(contract, 80))
		}
		var a bchain.EthAddress
		copy(a[:], desc)
		tokens[a] = c
	}
	return wantWei, tokens, nil
}
