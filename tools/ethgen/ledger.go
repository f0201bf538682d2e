package ethgen

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Token standards, spelled as bchain.TokenStandard.String() spells them.
const (
	ERC20   = "ERC20"
	ERC721  = "ERC721"
	ERC1155 = "ERC1155"
)

// Internal transfer kinds, spelled as bchain.EthInternalType.String().
const (
	InternalCall         = "call"
	InternalCreate       = "create"
	InternalSelfDestruct = "selfdestruct"
)

// TokenTransfer is one token movement the scenario caused. A batch
// transfer gives one entry per (id, value) pair; an ERC721 transfer has
// Value 1.
type TokenTransfer struct {
	Standard string
	Contract common.Address
	From, To common.Address
	Value    *big.Int
	TokenID  *big.Int // nil for ERC20
}

// InternalTransfer is value moved (or a contract created) by an inner call
// frame that was not reverted.
type InternalTransfer struct {
	Type     string
	From, To common.Address
	Value    *big.Int
}

// Tx is what the ledger knows of one tx.
type Tx struct {
	Hash    common.Hash
	Type    uint8
	From    common.Address
	To      *common.Address // nil for a contract creation
	Nonce   uint64
	Value   *big.Int
	Pending bool // left in the pool; the fields below are zero
	// Block, Status and fees come from the receipt.
	BlockNumber uint64
	BlockHash   common.Hash
	Status      uint64
	GasUsed     uint64
	Fee         *big.Int // paid by From, blob gas included
	// Effects; empty for failed txs.
	TokenTransfers    []TokenTransfer
	InternalTransfers []InternalTransfer
	Created           common.Address   // contract created by the tx or an inner CREATE; zero if none
	Delegations       []common.Address // EIP-7702 authorities whose code was set
}

// Holding is an address's activity on one token contract.
type Holding struct {
	Standard  string
	Transfers int                  // token transfer entries the address is party to
	Txs       map[common.Hash]bool // txs with such entries
	Balance   *big.Int             // ERC20
	NFTs      map[string]bool      // ERC721 token ids held (decimal)
	Multi     map[string]*big.Int  // ERC1155 id (decimal) -> value held
}

// Address is the expected state of one address.
type Address struct {
	Addr    common.Address
	Name    string // account or contract name; empty for others
	Balance *big.Int
	Nonce   uint64
	// Txs holds every mined tx the address takes part in: as sender,
	// recipient (or created contract), token transfer party or internal
	// transfer party. Reverted inner frames do not count.
	Txs map[common.Hash]bool
	// NonTokenTxs counts mined txs whose sender or recipient (created
	// contract for creations) the address is.
	NonTokenTxs int
	// InternalTxs counts mined txs with an internal transfer from or to
	// the address.
	InternalTxs int
	// PendingTxs are pool txs sent from or to the address.
	PendingTxs map[common.Hash]bool
	Tokens     map[common.Address]*Holding
}

// ContractInfo is a deployed contract's metadata.
type ContractInfo struct {
	Addr     common.Address
	Kind     string // the ethgen contract name, e.g. "Token"
	Name     string
	Symbol   string
	Decimals int
	Standard string // ERC20, ERC721, ERC1155 or "" for other contracts
}

// Block is a block the scenario sealed.
type Block struct {
	Number uint64
	Hash   common.Hash
	Txs    []common.Hash
}

// Ledger is the oracle: what an indexer must report after the scenario.
// The zero address (the mint side of token transfers) is not tracked.
type Ledger struct {
	ChainID   *big.Int
	Coinbase  common.Address
	Addresses map[common.Address]*Address
	Txs       map[common.Hash]*Tx
	Contracts map[common.Address]*ContractInfo
	Blocks    []Block
	Pending   []common.Hash
	// TxTypes lists the tx types that were mined.
	TxTypes map[uint8]bool
}

// NewLedger returns an empty ledger.
func NewLedger(chainID *big.Int, coinbase common.Address) *Ledger {
	return &Ledger{
		ChainID: chainID, Coinbase: coinbase,
		Addresses: map[common.Address]*Address{}, Txs: map[common.Hash]*Tx{},
		Contracts: map[common.Address]*ContractInfo{}, TxTypes: map[uint8]bool{},
	}
}

// Addr returns the entry of a, creating it with zero balance.
func (l *Ledger) Addr(a common.Address) *Address {
	e := l.Addresses[a]
	if e == nil {
		e = &Address{Addr: a, Balance: new(big.Int), Txs: map[common.Hash]bool{},
			PendingTxs: map[common.Hash]bool{}, Tokens: map[common.Address]*Holding{}}
		l.Addresses[a] = e
	}
	return e
}

// Track names an address and sets its starting balance and nonce.
func (l *Ledger) Track(name string, a common.Address, balance *big.Int, nonce uint64) {
	e := l.Addr(a)
	e.Name, e.Balance, e.Nonce = name, new(big.Int).Set(balance), nonce
}

// Names maps the named addresses' names to addresses.
func (l *Ledger) Names() map[string]common.Address {
	m := map[string]common.Address{}
	for a, e := range l.Addresses {
		if e.Name != "" {
			m[e.Name] = a
		}
	}
	return m
}

// SortedAddresses lists the tracked addresses in byte order.
func (l *Ledger) SortedAddresses() []common.Address {
	out := make([]common.Address, 0, len(l.Addresses))
	for a := range l.Addresses {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cmp(out[j]) < 0 })
	return out
}

// Effects is what the scenario expects a tx to do besides moving its
// value and paying its fee.
type Effects struct {
	Fails          bool // the receipt status is expected to be 0
	TokenTransfers []TokenTransfer
	Internal       []InternalTransfer
	Created        common.Address
	Contract       *ContractInfo    // metadata of a contract the tx creates
	Delegations    []common.Address // EIP-7702 authorities (applied even if the tx fails)
}

func newTx(tx *types.Transaction, from common.Address) *Tx {
	return &Tx{Hash: tx.Hash(), Type: tx.Type(), From: from, To: tx.To(), Nonce: tx.Nonce(), Value: new(big.Int).Set(tx.Value())}
}

// AddPending records a tx left in the pool with the token transfers it
// would make (an indexer may decode them from the calldata); balances do
// not change.
func (l *Ledger) AddPending(tx *types.Transaction, from common.Address, eff Effects) {
	t := newTx(tx, from)
	t.Pending = true
	t.TokenTransfers = eff.TokenTransfers
	l.Txs[t.Hash] = t
	l.Pending = append(l.Pending, t.Hash)
	parties := []common.Address{from}
	if t.To != nil {
		parties = append(parties, *t.To)
	}
	for _, tt := range eff.TokenTransfers {
		parties = append(parties, tt.From, tt.To)
	}
	for _, a := range parties {
		if a != (common.Address{}) {
			l.Addr(a).PendingTxs[t.Hash] = true
		}
	}
}

// Apply records a mined tx: the fee and nonce from the receipt, and, if
// it succeeded, its value and effects. It fails when the receipt status is
// not the expected one, since the effects would then be wrong.
func (l *Ledger) Apply(tx *types.Transaction, from common.Address, r *types.Receipt, baseFee *big.Int, eff Effects) error {
	want := types.ReceiptStatusSuccessful
	if eff.Fails {
		want = types.ReceiptStatusFailed
	}
	if r.Status != want {
		return fmt.Errorf("ethgen: tx %s: status %d, want %d", tx.Hash(), r.Status, want)
	}
	t := newTx(tx, from)
	t.BlockNumber, t.BlockHash, t.Status, t.GasUsed = r.BlockNumber.Uint64(), r.BlockHash, r.Status, r.GasUsed
	t.Fee = new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice)
	if r.BlobGasPrice != nil {
		t.Fee.Add(t.Fee, new(big.Int).Mul(new(big.Int).SetUint64(r.BlobGasUsed), r.BlobGasPrice))
	}
	l.Txs[t.Hash] = t
	l.TxTypes[t.Type] = true

	// Only the priority part of the gas price reaches the fee recipient;
	// the base fee and blob fee are burnt.
	tip := new(big.Int).Sub(r.EffectiveGasPrice, baseFee)
	l.Addr(l.Coinbase).Balance.Add(l.Addr(l.Coinbase).Balance, tip.Mul(tip, new(big.Int).SetUint64(r.GasUsed)))

	sender := l.Addr(from)
	sender.Balance.Sub(sender.Balance, t.Fee)
	sender.Nonce++
	for _, a := range eff.Delegations {
		l.Addr(a).Nonce++ // a valid authorization raises the authority's nonce
		t.Delegations = append(t.Delegations, a)
	}
	l.party(t.Hash, from).NonTokenTxs++
	switch {
	case t.To != nil && *t.To != from:
		l.party(t.Hash, *t.To).NonTokenTxs++
	case t.To == nil && r.Status == types.ReceiptStatusSuccessful:
		l.party(t.Hash, r.ContractAddress).NonTokenTxs++
	}
	if r.Status == types.ReceiptStatusSuccessful {
		l.applyEffects(t, sender, r.ContractAddress, eff)
	}
	return nil
}

// party is the entry of an address that tx involves.
func (l *Ledger) party(tx common.Hash, a common.Address) *Address {
	e := l.Addr(a)
	e.Txs[tx] = true
	return e
}

// applyEffects records what a successful tx did: its value, the contract
// it created, its internal and its token transfers.
func (l *Ledger) applyEffects(t *Tx, sender *Address, created common.Address, eff Effects) {
	if t.To != nil {
		move(sender, l.Addr(*t.To), t.Value)
	} else {
		move(sender, l.Addr(created), t.Value)
		t.Created = created
		l.Addr(t.Created).Nonce = 1 // EIP-161: contracts start at nonce 1
	}
	if eff.Created != (common.Address{}) {
		t.Created = eff.Created
	}
	if eff.Contract != nil {
		c := *eff.Contract
		c.Addr = t.Created
		l.Contracts[c.Addr] = &c
		if e := l.Addr(c.Addr); e.Name == "" {
			e.Name = c.Kind
		}
	}
	internal := map[common.Address]bool{}
	for _, it := range eff.Internal {
		t.InternalTransfers = append(t.InternalTransfers, it)
		move(l.party(t.Hash, it.From), l.party(t.Hash, it.To), it.Value)
		if it.Type == InternalCreate {
			l.Addr(it.From).Nonce++
			l.Addr(it.To).Nonce = 1
		}
		internal[it.From], internal[it.To] = true, true
	}
	for a := range internal {
		l.Addr(a).InternalTxs++
	}
	for _, tt := range eff.TokenTransfers {
		t.TokenTransfers = append(t.TokenTransfers, tt)
		l.applyToken(t.Hash, tt)
	}
}

func move(from, to *Address, v *big.Int) {
	from.Balance.Sub(from.Balance, v)
	to.Balance.Add(to.Balance, v)
}

func (l *Ledger) applyToken(h common.Hash, tt TokenTransfer) {
	for i, a := range []common.Address{tt.From, tt.To} {
		if a == (common.Address{}) || (i == 1 && tt.To == tt.From) {
			continue
		}
		e := l.Addr(a)
		e.Txs[h] = true
		hd := e.Tokens[tt.Contract]
		if hd == nil {
			hd = &Holding{Standard: tt.Standard, Txs: map[common.Hash]bool{}, Balance: new(big.Int),
				NFTs: map[string]bool{}, Multi: map[string]*big.Int{}}
			e.Tokens[tt.Contract] = hd
		}
		hd.Transfers++
		hd.Txs[h] = true
		out := i == 0
		if tt.From == tt.To {
			continue // a self-transfer counts once and changes nothing
		}
		switch tt.Standard {
		case ERC20:
			if out {
				hd.Balance.Sub(hd.Balance, tt.Value)
			} else {
				hd.Balance.Add(hd.Balance, tt.Value)
			}
		case ERC721:
			if out {
				delete(hd.NFTs, tt.TokenID.String())
			} else {
				hd.NFTs[tt.TokenID.String()] = true
			}
		case ERC1155:
			id := tt.TokenID.String()
			v := hd.Multi[id]
			if v == nil {
				v = new(big.Int)
				hd.Multi[id] = v
			}
			if out {
				v.Sub(v, tt.Value)
			} else {
				v.Add(v, tt.Value)
			}
		}
	}
}
