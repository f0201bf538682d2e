package eth

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// ensLog builds a NameRegistered log as the registrar controller emits it.
func ensLog(owner bchain.EthAddress, name string) bchain.EthLog {
	var label, ownerTopic bchain.Hash
	label[0] = 0x42
	copy(ownerTopic[12:], owner[:])
	head := make([]byte, 4*32)
	head[31] = 0x60 // offset of the string
	head[63] = 7    // cost
	head[95] = 9    // expiry
	binary.BigEndian.PutUint64(head[120:128], uint64(len(name)))
	padded := make([]byte, (len(name)+31)/32*32)
	copy(padded, name)
	return bchain.EthLog{Topics: []bchain.Hash{topicNameRegistered, label, ownerTopic}, Data: slices.Concat(head, padded)}
}

func TestENSSignature(t *testing.T) {
	// Blockbook's constant for the event.
	if got := hex.EncodeToString(topicNameRegistered[:]); got != "ca6abbe9d7f11422cb6ca7629fbf6fe9efb1c621f71ce8f02b9f2a230097404f" {
		t.Fatalf("NameRegistered topic = %s", got)
	}
}

func TestENSName(t *testing.T) {
	owner := bchain.EthAddress{1, 2, 3, 19: 0xff}
	l := ensLog(owner, "alice")
	o, name, ok := ENSName(&l)
	if !ok || o != owner || name != "alice" {
		t.Fatalf("ENSName = %x %q %v", o, name, ok)
	}
	long := ensLog(owner, string(make([]byte, 40)))
	if _, name, ok := ENSName(&long); !ok || len(name) != 40 {
		t.Fatalf("40-byte name: %q %v", name, ok)
	}
}

func TestENSNameMalformed(t *testing.T) {
	owner := bchain.EthAddress{9}
	good := ensLog(owner, "bob")
	cases := map[string]func(l *bchain.EthLog){
		"other event":  func(l *bchain.EthLog) { l.Topics[0] = topicTransfer },
		"two topics":   func(l *bchain.EthLog) { l.Topics = l.Topics[:2] },
		"four topics":  func(l *bchain.EthLog) { l.Topics = append(l.Topics, bchain.Hash{}) },
		"short data":   func(l *bchain.EthLog) { l.Data = l.Data[:4*32+16] },
		"empty name":   func(l *bchain.EthLog) { l.Data[127] = 0 },
		"past the end": func(l *bchain.EthLog) { l.Data[127] = 33 },
		"huge length":  func(l *bchain.EthLog) { l.Data[96] = 0x80 },
		"2^63 length":  func(l *bchain.EthLog) { l.Data[120] = 0x80 },
		"no data":      func(l *bchain.EthLog) { l.Data = nil },
	}
	for name, f := range cases {
		l := ensLog(owner, "bob")
		l.Topics = append([]bchain.Hash(nil), good.Topics...)
		f(&l)
		if o, n, ok := ENSName(&l); ok {
			t.Errorf("%s: decoded %x %q", name, o, n)
		}
	}
}

func FuzzENSName(f *testing.F) {
	l := ensLog(bchain.EthAddress{1}, "carol")
	f.Add(l.Data, 3)
	f.Add([]byte{}, 3)
	f.Fuzz(func(t *testing.T, data []byte, topics int) {
		l := bchain.EthLog{Data: data}
		for i := 0; i < topics%5; i++ {
			l.Topics = append(l.Topics, topicNameRegistered)
		}
		if _, name, ok := ENSName(&l); ok && (name == "" || len(name) > maxENSBytes) {
			t.Fatalf("bad name %q", name)
		}
	})
}
