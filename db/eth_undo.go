package db

// The Ethereum form of blockTxs: what a block did to the index, kept for
// the rollback window so that disconnecting it is exact. Address rows are
// undone by applying the block's movements backwards, contract rows by
// taking away the events of the block.

import (
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
)

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
	flag := func(max byte) byte {
		f := d.bytes(1)
		if f == nil {
			return 0
		}
		if f[0] > max {
			d.fail("code %d above %d", f[0], max)
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

// ethTxRecords extracts what the address rows need from a block's txs.
func ethTxRecords(blk *bchain.EthBlock) []EthTxRecord {
	out := make([]EthTxRecord, len(blk.Txs))
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		r := EthTxRecord{Txid: tx.Hash, From: tx.From.AddrDesc()}
		if tx.To != nil {
			r.To = tx.To.AddrDesc()
		}
		// A failed creation leaves no contract (its receipt still names
		// the address it would have had).
		if tx.Receipt != nil && tx.Receipt.ContractAddress != nil && tx.Receipt.Status != bchain.EthStatusFailure {
			r.Created = tx.Receipt.ContractAddress.AddrDesc()
		}
		if tx.Internal != nil {
			for _, it := range tx.Internal.Transfers {
				r.Internal = append(r.Internal, InternalTransfer{Kind: it.Type, From: it.From.AddrDesc(), To: it.To.AddrDesc(),
					Value: nonNil(it.Value)})
			}
		}
		for _, tt := range tx.Transfers {
			r.Tokens = append(r.Tokens, EthTokenTransfer{Standard: tt.Standard, Contract: tt.Contract.AddrDesc(),
				From: tt.From.AddrDesc(), To: tt.To.AddrDesc(), Value: nonNil(tt.Value), ID: nonNil(tt.TokenID)})
		}
		out[i] = r
	}
	return out
}

func nonNil(x *big.Int) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return x
}
