package eth

import (
	"encoding/binary"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/openexplorer/blockbook/bchain"
)

// topicNameRegistered is the NameRegistered event of ENS's registrar
// controller: the name (a string, in data), its label hash and its owner
// (indexed), the cost and the expiry (in data).
var topicNameRegistered = bchain.Hash(crypto.Keccak256Hash([]byte("NameRegistered(string,bytes32,address,uint256,uint256)")))

// ENS name layout in the event's data, as Blockbook reads it: the string's
// length is the fourth word and its bytes follow; the offset word is not
// looked at. Data shorter than five words is not a registration.
const (
	ensLenWord  = 3 * 32
	ensNameAt   = 4 * 32
	ensMinData  = 5 * 32
	maxENSBytes = 1024 // longer names are not kept (no real ENS name is near it)
)

// ENSName decodes an ENS NameRegistered log: the owner (topic 2, its low
// 20 bytes) and the name registered. Any contract's log counts, as in
// Blockbook. ok is false for other logs, malformed ones and empty or
// overlong names; it never panics on what a contract emits.
func ENSName(l *bchain.EthLog) (owner bchain.EthAddress, name string, ok bool) {
	if len(l.Topics) != 3 || l.Topics[0] != topicNameRegistered || len(l.Data) < ensMinData {
		return owner, "", false
	}
	word := l.Data[ensLenWord:ensNameAt]
	for _, b := range word[:24] {
		if b != 0 {
			return owner, "", false // longer than any log
		}
	}
	n := binary.BigEndian.Uint64(word[24:])
	if n == 0 || n > maxENSBytes || n > uint64(len(l.Data)-ensNameAt) {
		return owner, "", false
	}
	copy(owner[:], l.Topics[2][12:])
	return owner, string(l.Data[ensNameAt : ensNameAt+int(n)]), true
}
