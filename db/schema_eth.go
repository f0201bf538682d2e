package db

// schema_eth.go: the rows of Ethereum-type chains (docs/schema.md,
// "Ethereum-type column families"). They share the height, default,
// transactions and fiatRates column families with Bitcoin-type chains; the
// rest are their own or an Ethereum form of a Bitcoin name.
//
// Amounts are arbitrary-precision integers, stored as a signed big integer:
// sb(x) = uv(len) ‖ sign byte (0 or 1, only when len > 0) ‖ magnitude,
// big-endian without leading zeros. Zero is the single byte 0.

import (
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
)

// EthAddrLen is the length of an Ethereum address descriptor.
const EthAddrLen = 20

// maxBigLen bounds stored integers: token ids and values are uint256.
const maxBigLen = 32

func (e *encoder) bigInt(x *big.Int) {
	if x == nil || x.Sign() == 0 {
		e.uvarint(0)
		return
	}
	mag := x.Bytes()
	e.uvarint(uint64(len(mag)))
	if x.Sign() < 0 {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
	e.raw(mag)
}

func (d *decoder) bigInt() *big.Int {
	n := d.uvarint()
	if n == 0 {
		return new(big.Int)
	}
	if n > maxBigLen {
		d.fail("integer of %d bytes", n)
		return new(big.Int)
	}
	b := d.bytes(1 + int(n))
	if b == nil {
		return new(big.Int)
	}
	if b[0] > 1 || b[1] == 0 {
		d.fail("integer not in canonical form")
		return new(big.Int)
	}
	x := new(big.Int).SetBytes(b[1:])
	if b[0] == 1 {
		x.Neg(x)
	}
	return x
}

func (e *encoder) ethAddr(a bchain.AddrDesc) { e.raw(a) }

func (d *decoder) ethAddr() bchain.AddrDesc {
	b := d.bytes(EthAddrLen)
	if b == nil {
		return nil
	}
	return bchain.AddrDesc(append([]byte(nil), b...))
}

// optEthAddr is an address or nothing: u8(0) or u8(1) ‖ address.
func (e *encoder) optEthAddr(a bchain.AddrDesc) {
	if len(a) == 0 {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.ethAddr(a)
}

func (d *decoder) optEthAddr() bchain.AddrDesc {
	switch f := d.bytes(1); {
	case f == nil:
		return nil
	case f[0] == 0:
		return nil
	case f[0] == 1:
		return d.ethAddr()
	default:
		d.fail("address flag %d", f[0])
		return nil
	}
}

// ---- addresses (Ethereum) ---------------------------------------------

// EthRoleKind says how an address takes part in a tx.
type EthRoleKind uint8

const (
	EthRoleTx       EthRoleKind = iota // the tx's sender (From) or recipient
	EthRoleInternal                    // party of internal transfer Index
	EthRoleToken                       // party of token transfer Index
	EthRoleCreated                     // the contract the tx (or its internal call Index) created
	numEthRoles
)

// EthRole is one appearance of an address in a tx.
type EthRole struct {
	Kind  EthRoleKind
	From  bool // the sending side (for Created: unused)
	Index uint32
}

// EthAddrTx is one tx in an Ethereum addresses row.
type EthAddrTx struct {
	Txid  bchain.Hash
	Roles []EthRole
}

// packEthAddrTxs encodes per tx: txid ‖ uv(n) ‖ n × uv(index<<3 | kind<<1 | from).
func packEthAddrTxs(txs []EthAddrTx) []byte {
	e := encoder{b: make([]byte, 0, len(txs)*36)}
	for i := range txs {
		e.hash(txs[i].Txid)
		e.uvarint(uint64(len(txs[i].Roles)))
		for _, r := range txs[i].Roles {
			c := uint64(r.Index)<<3 | uint64(r.Kind)<<1
			if r.From {
				c |= 1
			}
			e.uvarint(c)
		}
	}
	return e.b
}

func unpackEthAddrTxs(b []byte) ([]EthAddrTx, error) {
	d := newDecoder("addresses (Ethereum)", b)
	var txs []EthAddrTx
	for d.more() {
		t := EthAddrTx{Txid: d.hash()}
		n := d.count(1)
		if n == 0 {
			d.fail("tx without roles")
		}
		t.Roles = make([]EthRole, n)
		for i := range t.Roles {
			c := d.uvarint()
			kind := EthRoleKind(c >> 1 & 3)
			if c>>3 > 0xffffffff || kind >= numEthRoles {
				d.fail("role code %d out of range", c)
			}
			t.Roles[i] = EthRole{Kind: kind, From: c&1 == 1, Index: uint32(c >> 3)}
		}
		txs = append(txs, t)
	}
	return txs, d.done()
}

// ---- addressContracts ----------------------------------------------------

// Stored codes of bchain.TokenStandard and bchain.EthInternalType are their
// values; these bound what a row may hold.
const (
	numTokenStandards = bchain.TokenERC1155 + 1
	numInternalKinds  = bchain.EthInternalSelfDestruct + 1
)

// TokenValue is one ERC1155 id and the amount of it held.
type TokenValue struct {
	ID, Value *big.Int
}

// AddrContract is what an address holds of one token contract.
type AddrContract struct {
	Contract  bchain.AddrDesc
	Standard  bchain.TokenStandard
	Transfers uint32
	Balance   *big.Int // ERC20 (may go negative when a token mints without events)
	// Values are the ERC721 and ERC1155 ids with the amount held, by id
	// ascending, zero amounts left out. An ERC721 id is held with amount 1;
	// another amount means the token's events disagree with ownership, and
	// is kept so that undoing blocks stays exact.
	Values []TokenValue
}

// AddrContracts is the addressContracts value: uv(txs) ‖ uv(nonTokenTxs) ‖
// uv(internalTxs) ‖ uv(#contracts) ‖ per contract: address ‖ u8(standard) ‖
// uv(transfers) ‖ (ERC20: sb(balance) | ERC721, ERC1155: uv(n) ‖ n ×
// (sb(id) ‖ sb(amount))). Contracts keep the order in which the address
// first met them.
type AddrContracts struct {
	Txs, NonTokenTxs, InternalTxs uint32
	Contracts                     []AddrContract
}

func packAddrContracts(a *AddrContracts) []byte {
	e := encoder{b: make([]byte, 0, 8+len(a.Contracts)*32)}
	e.uvarint(uint64(a.Txs))
	e.uvarint(uint64(a.NonTokenTxs))
	e.uvarint(uint64(a.InternalTxs))
	e.uvarint(uint64(len(a.Contracts)))
	for i := range a.Contracts {
		c := &a.Contracts[i]
		e.ethAddr(c.Contract)
		e.b = append(e.b, byte(c.Standard))
		e.uvarint(uint64(c.Transfers))
		switch c.Standard {
		case bchain.TokenERC20:
			e.bigInt(c.Balance)
		case bchain.TokenERC721, bchain.TokenERC1155:
			e.uvarint(uint64(len(c.Values)))
			for _, v := range c.Values {
				e.bigInt(v.ID)
				e.bigInt(v.Value)
			}
		}
	}
	return e.b
}

func unpackAddrContracts(b []byte) (*AddrContracts, error) {
	d := newDecoder("addressContracts", b)
	a := &AddrContracts{Txs: d.uvarint32(), NonTokenTxs: d.uvarint32(), InternalTxs: d.uvarint32()}
	a.Contracts = make([]AddrContract, d.count(EthAddrLen+2))
	for i := range a.Contracts {
		c := &a.Contracts[i]
		c.Contract = d.ethAddr()
		if s := d.bytes(1); s != nil {
			c.Standard = bchain.TokenStandard(s[0])
		}
		if c.Standard >= numTokenStandards {
			d.fail("token standard %d", c.Standard)
		}
		c.Transfers = d.uvarint32()
		switch c.Standard {
		case bchain.TokenERC20:
			c.Balance = d.bigInt()
		case bchain.TokenERC721, bchain.TokenERC1155:
			c.Values = make([]TokenValue, d.count(2))
			for j := range c.Values {
				c.Values[j] = TokenValue{ID: d.bigInt(), Value: d.bigInt()}
			}
		}
	}
	return a, d.done()
}

// ---- internalData --------------------------------------------------------

// InternalTransfer is value moved by an internal call frame that did not
// fail.
type InternalTransfer struct {
	Kind     bchain.EthInternalType
	From, To bchain.AddrDesc
	Value    *big.Int
}

// InternalData is the internalData value of a tx with internal transfers,
// a created contract or an error: u8(kind of the tx's own frame) ‖
// opt(created contract) ‖ lb(error) ‖ uv(n) ‖ n × (u8(kind) ‖ from ‖ to ‖
// sb(value)).
type InternalData struct {
	Kind      bchain.EthInternalType
	Created   bchain.AddrDesc // contract created by the tx itself, if any
	Error     string
	Transfers []InternalTransfer
}

// maxErrorLen bounds stored trace error texts.
const maxErrorLen = 1024

func packInternalData(x *InternalData) []byte {
	e := encoder{b: make([]byte, 0, 4+len(x.Error)+len(x.Transfers)*48)}
	e.b = append(e.b, byte(x.Kind))
	e.optEthAddr(x.Created)
	errText := x.Error
	if len(errText) > maxErrorLen {
		errText = errText[:maxErrorLen]
	}
	e.lenBytes([]byte(errText))
	e.uvarint(uint64(len(x.Transfers)))
	for _, t := range x.Transfers {
		e.b = append(e.b, byte(t.Kind))
		e.ethAddr(t.From)
		e.ethAddr(t.To)
		e.bigInt(t.Value)
	}
	return e.b
}

func unpackInternalData(b []byte) (*InternalData, error) {
	d := newDecoder("internalData", b)
	x := &InternalData{}
	kind := func() bchain.EthInternalType {
		k := d.bytes(1)
		if k == nil {
			return 0
		}
		if bchain.EthInternalType(k[0]) >= numInternalKinds {
			d.fail("frame kind %d", k[0])
		}
		return bchain.EthInternalType(k[0])
	}
	x.Kind = kind()
	x.Created = d.optEthAddr()
	x.Error = string(d.lenBytes(maxErrorLen))
	x.Transfers = make([]InternalTransfer, d.count(1+2*EthAddrLen+1))
	for i := range x.Transfers {
		x.Transfers[i] = InternalTransfer{Kind: kind(), From: d.ethAddr(), To: d.ethAddr(), Value: d.bigInt()}
	}
	return x, d.done()
}

// ---- contracts -----------------------------------------------------------

// ContractEventKind is what a block did to a contract.
type ContractEventKind uint8

const (
	ContractSeen      ContractEventKind = iota // first token transfer, telling the standard
	ContractCreated                            // created (by a tx or an internal call)
	ContractDestroyed                          // selfdestructed
	numContractEvents
)

// ContractEvent is one thing a block at Height did to a contract.
type ContractEvent struct {
	Height   uint32
	Kind     ContractEventKind
	Standard bchain.TokenStandard // for ContractSeen
}

// ContractInfo is the contracts value: lb(name) ‖ lb(symbol) ‖
// u8(decimals) ‖ uv(#events) ‖ per event, by height then kind:
// uv(height) ‖ u8(kind) [‖ u8(standard) for seen]. The metadata comes from
// the node when the row is first written. Keeping the events rather than
// their result lets a disconnected block take exactly its own events away
// (the row goes when none are left).
type ContractInfo struct {
	Name, Symbol string
	Decimals     uint8
	Events       []ContractEvent
	// Fixed: the metadata is an operator's (contract_fix.go), not part
	// of the row; fixStandard, unless unknown, replaces the one seen.
	Fixed       bool
	fixStandard bchain.TokenStandard
}

// Standard is the token standard of the first transfer seen.
func (c *ContractInfo) Standard() bchain.TokenStandard {
	if c.fixStandard != bchain.TokenUnknown {
		return c.fixStandard
	}
	for _, e := range c.Events {
		if e.Kind == ContractSeen {
			return e.Standard
		}
	}
	return bchain.TokenUnknown
}

// Lifetime returns the height of the last creation and of a selfdestruct
// after it (0: none known).
func (c *ContractInfo) Lifetime() (created, destroyed uint32) {
	for _, e := range c.Events {
		switch e.Kind {
		case ContractCreated:
			created, destroyed = e.Height, 0
		case ContractDestroyed:
			destroyed = e.Height
		}
	}
	return created, destroyed
}

// maxContractText bounds stored names and symbols.
const maxContractText = 256

func packContractInfo(c *ContractInfo) []byte {
	e := encoder{b: make([]byte, 0, 16+len(c.Name)+len(c.Symbol)+4*len(c.Events))}
	e.lenBytes([]byte(truncateText(c.Name)))
	e.lenBytes([]byte(truncateText(c.Symbol)))
	e.b = append(e.b, c.Decimals)
	e.uvarint(uint64(len(c.Events)))
	for _, ev := range c.Events {
		e.uvarint(uint64(ev.Height))
		e.b = append(e.b, byte(ev.Kind))
		if ev.Kind == ContractSeen {
			e.b = append(e.b, byte(ev.Standard))
		}
	}
	return e.b
}

func unpackContractInfo(b []byte) (*ContractInfo, error) {
	d := newDecoder("contracts", b)
	c := &ContractInfo{Name: string(d.lenBytes(maxContractText)), Symbol: string(d.lenBytes(maxContractText))}
	if dec := d.bytes(1); dec != nil {
		c.Decimals = dec[0]
	}
	c.Events = make([]ContractEvent, d.count(2))
	for i := range c.Events {
		ev := &c.Events[i]
		ev.Height = d.uvarint32()
		if k := d.bytes(1); k != nil {
			ev.Kind = ContractEventKind(k[0])
		}
		switch {
		case ev.Kind >= numContractEvents:
			d.fail("contract event %d", ev.Kind)
		case ev.Kind == ContractSeen:
			if s := d.bytes(1); s != nil {
				ev.Standard = bchain.TokenStandard(s[0])
			}
			if ev.Standard >= numTokenStandards {
				d.fail("token standard %d", ev.Standard)
			}
		}
	}
	return c, d.done()
}

// truncateText cuts s to maxContractText bytes without splitting a UTF-8
// sequence.
func truncateText(s string) string {
	if len(s) <= maxContractText {
		return s
	}
	i := maxContractText
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i]
}

// ---- blockTxs (Ethereum): undo records -------------------------------------

// The Ethereum form of blockTxs: what a block did to the index, kept for
// the rollback window so that disconnecting it is exact. Address rows are
// undone by applying the block's movements backwards, contract rows by
// taking away the events of the block.

// EthTokenTransfer is one token movement as the index keeps it.
type EthTokenTransfer struct {
	Standard bchain.TokenStandard
	Contract bchain.AddrDesc
	From, To bchain.AddrDesc
	Value    *big.Int // ERC20 and ERC1155 amount (1 for ERC721)
	ID       *big.Int // ERC721 and ERC1155 token id (0 for ERC20)
}

// EthTxRecord is one tx of a block as far as the address rows go.
type EthTxRecord struct {
	Txid     bchain.Hash
	From     bchain.AddrDesc
	To       bchain.AddrDesc // nil for a contract creation
	Created  bchain.AddrDesc // the contract the tx itself created
	Internal []InternalTransfer
	Tokens   []EthTokenTransfer
}

// EthBlockUndo is the Ethereum blockTxs value: uv(#txs) ‖ per tx: txid ‖
// from ‖ opt(to) ‖ opt(created) ‖ uv(n) ‖ n × (u8(kind) ‖ from ‖ to ‖
// sb(value)) ‖ uv(m) ‖ m × (u8(standard) ‖ contract ‖ from ‖ to ‖
// sb(value) ‖ sb(id)).
type EthBlockUndo struct {
	Txs []EthTxRecord
}

func packEthBlockUndo(u *EthBlockUndo) []byte {
	e := encoder{b: make([]byte, 0, 16+len(u.Txs)*80)}
	e.uvarint(uint64(len(u.Txs)))
	for i := range u.Txs {
		t := &u.Txs[i]
		e.hash(t.Txid)
		e.ethAddr(t.From)
		e.optEthAddr(t.To)
		e.optEthAddr(t.Created)
		e.uvarint(uint64(len(t.Internal)))
		for _, it := range t.Internal {
			e.b = append(e.b, byte(it.Kind))
			e.ethAddr(it.From)
			e.ethAddr(it.To)
			e.bigInt(it.Value)
		}
		e.uvarint(uint64(len(t.Tokens)))
		for _, tt := range t.Tokens {
			e.b = append(e.b, byte(tt.Standard))
			e.ethAddr(tt.Contract)
			e.ethAddr(tt.From)
			e.ethAddr(tt.To)
			e.bigInt(tt.Value)
			e.bigInt(tt.ID)
		}
	}
	return e.b
}

func unpackEthBlockUndo(b []byte) (*EthBlockUndo, error) {
	d := newDecoder("blockTxs (Ethereum)", b)
	u := &EthBlockUndo{Txs: make([]EthTxRecord, d.count(32+EthAddrLen+4))}
	flag := func(maxCode byte) byte {
		f := d.bytes(1)
		if f == nil {
			return 0
		}
		if f[0] > maxCode {
			d.fail("code %d above %d", f[0], maxCode)
		}
		return f[0]
	}
	for i := range u.Txs {
		t := &u.Txs[i]
		t.Txid, t.From, t.To, t.Created = d.hash(), d.ethAddr(), d.optEthAddr(), d.optEthAddr()
		t.Internal = make([]InternalTransfer, d.count(2+2*EthAddrLen))
		for j := range t.Internal {
			t.Internal[j] = InternalTransfer{Kind: bchain.EthInternalType(flag(byte(numInternalKinds - 1))),
				From: d.ethAddr(), To: d.ethAddr(), Value: d.bigInt()}
		}
		t.Tokens = make([]EthTokenTransfer, d.count(3+3*EthAddrLen))
		for j := range t.Tokens {
			t.Tokens[j] = EthTokenTransfer{Standard: bchain.TokenStandard(flag(byte(numTokenStandards - 1))),
				Contract: d.ethAddr(), From: d.ethAddr(), To: d.ethAddr(), Value: d.bigInt(), ID: d.bigInt()}
		}
	}
	return u, d.done()
}
