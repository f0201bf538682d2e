// Package bchain defines what the indexer needs from a blockchain node and how
// per-coin plugins (bchain/coins/*) provide it. It knows nothing of storage or
// HTTP: db, api and server depend on it, never the other way round.
package bchain

import (
	"encoding/hex"
	"fmt"
)

// Hash is a 32-byte block or transaction id in display byte order, the order
// explorers and node RPCs print (for Bitcoin: the reverse of the internal
// little-endian double-SHA256 bytes).
type Hash [32]byte

// String renders the hash as 64 lowercase hex characters, with one
// allocation (hex.EncodeToString makes two): answers print thousands.
func (h Hash) String() string {
	var b [64]byte
	hex.Encode(b[:], h[:])
	return string(b[:])
}

// IsZero reports whether h is all zero bytes (e.g. the genesis block's parent).
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash parses 64 hex characters into a Hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, fmt.Errorf("%w: want 64 hex characters, got %d", ErrInvalidHash, len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("%w: %v", ErrInvalidHash, err)
	}
	return h, nil
}

// AddrDesc (address descriptor) is the chain-specific byte string under which
// the index files an address. For Bitcoin-type chains it is the output script
// (P2PK scripts are filed under the key's P2PKH script).
type AddrDesc []byte

// String renders the descriptor as hex, for logs.
func (d AddrDesc) String() string { return hex.EncodeToString(d) }

// ChainType tells which index code and API flavour serve a coin.
type ChainType int

const (
	// ChainBitcoinType covers UTXO chains whose raw blocks are decoded in Go.
	ChainBitcoinType ChainType = iota
	// ChainEthereumType covers account-model EVM chains.
	ChainEthereumType
	// ChainTronType is Tron: an account model whose contracts run on an
	// EVM (logs and TRC-20 transfers are Ethereum's), but whose txs are
	// java-tron's typed system contracts, addresses base58check.
	ChainTronType
)

func (t ChainType) String() string {
	switch t {
	case ChainBitcoinType:
		return "bitcoin-type"
	case ChainEthereumType:
		return "ethereum-type"
	case ChainTronType:
		return "tron-type"
	}
	return fmt.Sprintf("ChainType(%d)", int(t))
}

// BlockHeader is the part of a block every chain type shares.
type BlockHeader struct {
	Hash   Hash
	Prev   Hash
	Height uint32
	Time   int64 // unix seconds
	Size   int   // serialized size in bytes
}

// Block is a decoded block as the sync worker passes it to the index. Txs is
// filled for UTXO chains; account chains extend Block with their own fields.
type Block struct {
	BlockHeader
	// Header fields as the chain defines them; only shown by the API.
	Version    int32
	MerkleRoot Hash
	Nonce      uint32
	Bits       uint32
	// Header is the serialized block header as the chain defines it (80
	// bytes for Bitcoin), stored by the index for Electrum and Esplora;
	// nil where the parser gives none.
	Header []byte
	Txs    []Tx
	// Eth is the Ethereum-type part of the block; nil for UTXO chains.
	Eth *EthBlock
}

// TxCount is the number of txs of the block, whatever its chain type.
func (b *Block) TxCount() int {
	if b.Eth != nil {
		return len(b.Eth.Txs)
	}
	return len(b.Txs)
}

// Tx is a decoded UTXO-model transaction.
type Tx struct {
	Txid     Hash
	Version  int32
	LockTime uint32
	Vin      []Vin
	Vout     []Vout
	Size     int // serialized size with witness
	VSize    int // virtual size: ceil(weight / 4)
	Raw      []byte
	// ValueBalance is value that enters the tx's transparent part from
	// outside its inputs (Zcash's shielded pools), negative when value
	// leaves to them: fees are inputs + ValueBalance - outputs. Zero for
	// most coins.
	ValueBalance int64
	// Specific is coin-specific detail of the tx the API shows as its
	// "coinSpecific" object (e.g. a Dash special tx's payload, MWEB data);
	// nil for most txs. It must marshal to JSON.
	Specific any
}

// IsCoinbase reports whether tx creates new coins (its only input has no prevout).
func (tx *Tx) IsCoinbase() bool {
	return len(tx.Vin) == 1 && tx.Vin[0].Coinbase
}

// Weight is the tx's BIP141 weight: three times its size without witness
// data plus its full size (four times its size when it has no witness).
func (tx *Tx) Weight() int {
	witness, hasWitness := 0, false
	for i := range tx.Vin {
		w := tx.Vin[i].Witness
		hasWitness = hasWitness || len(w) > 0
		witness += CompactSizeLen(len(w))
		for _, item := range w {
			witness += CompactSizeLen(len(item)) + len(item)
		}
	}
	if !hasWitness {
		return tx.Size * 4
	}
	stripped := tx.Size - witness - 2 // marker and flag bytes
	return stripped*3 + tx.Size
}

// CompactSizeLen is the length of n as a Bitcoin CompactSize integer
// (a count or length prefix in serialized txs and blocks).
func CompactSizeLen(n int) int {
	switch {
	case n < 0xfd:
		return 1
	case n <= 0xffff:
		return 3
	case n <= 0xffffffff:
		return 5
	}
	return 9
}

// Vin is one transaction input.
type Vin struct {
	PrevTxid  Hash
	PrevVout  uint32
	Coinbase  bool   // true for the coinbase input; ScriptSig then holds the coinbase data
	ScriptSig []byte // also the coinbase data
	Witness   [][]byte
	Sequence  uint32
}

// Vout is one transaction output.
type Vout struct {
	Value  uint64 // in the coin's base unit (satoshi)
	Script []byte
	// Specific is coin-specific detail of the output the API shows as its
	// "coinSpecific" object (e.g. a CashTokens token, a Namecoin name
	// operation); nil for most outputs. It must marshal to JSON.
	Specific any
}

// ChainInfo is the node's own view of the chain, shown by the status
// endpoints. Fields a node cannot report are left empty.
type ChainInfo struct {
	Chain           string
	Blocks          int
	Headers         int
	BestBlockHash   string
	Difficulty      string
	SizeOnDisk      int64
	Version         string
	Subversion      string
	ProtocolVersion string
	TimeOffset      float64
	Warnings        string
	Consensus       any
	// ConsensusVersion is the consensus client's version (Ethereum-type
	// coins with consensusNodeVersion set).
	ConsensusVersion string
}
