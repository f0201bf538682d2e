package eth

import (
	"math/big"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/openexplorer/blockbook/bchain"
)

// Event signatures (topic 0) of the token standards' transfer events.
var (
	topicTransfer       = bchain.Hash(crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)")))
	topicTransferSingle = bchain.Hash(crypto.Keccak256Hash([]byte("TransferSingle(address,address,address,uint256,uint256)")))
	topicTransferBatch  = bchain.Hash(crypto.Keccak256Hash([]byte("TransferBatch(address,address,address,uint256[],uint256[])")))
)

// maxBatchEntries bounds a TransferBatch decode: a log claiming more is
// malformed (block gas limits keep real ones far smaller).
const maxBatchEntries = 1 << 16

// TokenTransfers decodes the token transfers in a tx's logs. ERC20 and
// ERC721 share the Transfer event: with the token id indexed (4 topics) it
// is ERC721, with the amount in data (3 topics) ERC20. Logs that do not
// follow the standard's layout are skipped, not errors: any contract can
// emit anything.
func TokenTransfers(logs []bchain.EthLog) []bchain.TokenTransfer {
	var out []bchain.TokenTransfer
	for i := range logs {
		out = append(out, logTransfers(&logs[i])...)
	}
	return out
}

func logTransfers(l *bchain.EthLog) []bchain.TokenTransfer {
	if len(l.Topics) == 0 {
		return nil
	}
	switch l.Topics[0] {
	case topicTransfer:
		from, ok1 := topicAddress(l.Topics, 1)
		to, ok2 := topicAddress(l.Topics, 2)
		if !ok1 || !ok2 {
			return nil
		}
		t := bchain.TokenTransfer{Contract: l.Address, From: from, To: to, LogIndex: l.Index}
		switch {
		case len(l.Topics) == 3 && len(l.Data) == 32:
			t.Standard, t.Value = bchain.TokenERC20, new(big.Int).SetBytes(l.Data)
		case len(l.Topics) == 4 && len(l.Data) == 0:
			t.Standard, t.Value, t.TokenID = bchain.TokenERC721, big.NewInt(1), new(big.Int).SetBytes(l.Topics[3][:])
		default:
			return nil
		}
		return []bchain.TokenTransfer{t}
	case topicTransferSingle:
		from, to, ok := erc1155Parties(l)
		if !ok || len(l.Data) != 64 {
			return nil
		}
		return []bchain.TokenTransfer{{
			Standard: bchain.TokenERC1155, Contract: l.Address, From: from, To: to, LogIndex: l.Index,
			TokenID: new(big.Int).SetBytes(l.Data[:32]), Value: new(big.Int).SetBytes(l.Data[32:]),
		}}
	case topicTransferBatch:
		from, to, ok := erc1155Parties(l)
		if !ok {
			return nil
		}
		ids, ok1 := abiUintArray(l.Data, 0)
		values, ok2 := abiUintArray(l.Data, 1)
		if !ok1 || !ok2 || len(ids) != len(values) {
			return nil
		}
		out := make([]bchain.TokenTransfer, len(ids))
		for i := range ids {
			out[i] = bchain.TokenTransfer{Standard: bchain.TokenERC1155, Contract: l.Address, From: from, To: to,
				TokenID: ids[i], Value: values[i], LogIndex: l.Index}
		}
		return out
	}
	return nil
}

// erc1155Parties reads from and to of TransferSingle/TransferBatch, whose
// topics are (signature, operator, from, to).
func erc1155Parties(l *bchain.EthLog) (from, to bchain.EthAddress, ok bool) {
	if len(l.Topics) != 4 {
		return from, to, false
	}
	from, ok1 := topicAddress(l.Topics, 2)
	to, ok2 := topicAddress(l.Topics, 3)
	return from, to, ok1 && ok2
}

// topicAddress reads an indexed address: 12 zero bytes then 20 address
// bytes; anything else is not an address.
func topicAddress(topics []bchain.Hash, i int) (bchain.EthAddress, bool) {
	var a bchain.EthAddress
	if i >= len(topics) {
		return a, false
	}
	for _, b := range topics[i][:12] {
		if b != 0 {
			return a, false
		}
	}
	copy(a[:], topics[i][12:])
	return a, true
}

// abiWord returns the 32-byte word at byte offset off, if it is in data.
func abiWord(data []byte, off uint64) ([]byte, bool) {
	if off > uint64(len(data)) || uint64(len(data))-off < 32 {
		return nil, false
	}
	return data[off : off+32], true
}

// abiUint reads a word as a small unsigned integer (offsets, lengths).
func abiUint(data []byte, off uint64) (uint64, bool) {
	w, ok := abiWord(data, off)
	if !ok {
		return 0, false
	}
	for _, b := range w[:24] {
		if b != 0 {
			return 0, false
		}
	}
	var v uint64
	for _, b := range w[24:] {
		v = v<<8 | uint64(b)
	}
	return v, true
}

// abiUintArray decodes the dynamic uint256[] that is the arg-th head
// argument of ABI-encoded data, checking every offset and length.
func abiUintArray(data []byte, arg uint64) ([]*big.Int, bool) {
	off, ok := abiUint(data, arg*32)
	if !ok {
		return nil, false
	}
	n, ok := abiUint(data, off)
	if !ok || n > maxBatchEntries || n*32 > uint64(len(data))-off-32 {
		return nil, false
	}
	out := make([]*big.Int, n)
	for i := uint64(0); i < n; i++ {
		w, _ := abiWord(data, off+32+i*32)
		out[i] = new(big.Int).SetBytes(w)
	}
	return out, true
}

// abiString decodes a contract's name() or symbol() answer: an ABI string,
// or the bytes32 some early tokens (MKR, SAI) return, zero-padded.
func abiString(data []byte) (string, bool) {
	if len(data) == 32 {
		end := 0
		for end < 32 && data[end] != 0 {
			end++
		}
		for _, b := range data[end:] {
			if b != 0 {
				return "", false // not a zero-padded string
			}
		}
		return validString(data[:end])
	}
	off, ok := abiUint(data, 0)
	if !ok {
		return "", false
	}
	n, ok := abiUint(data, off)
	if !ok || n > uint64(len(data))-off-32 {
		return "", false
	}
	return validString(data[off+32 : off+32+n])
}

// validString accepts UTF-8 text without control characters.
func validString(b []byte) (string, bool) {
	s := string(b)
	for _, r := range s {
		if r == 0xFFFD || r < 0x20 && r != '\t' {
			return "", false
		}
	}
	return s, true
}
