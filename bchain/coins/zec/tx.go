package zec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Zcash transaction formats (protocol spec section 7.1, ZIPs 202, 225, 243):
// v1 is Bitcoin's; v2 adds Sprout JoinSplits; v3 (Overwinter) and v4
// (Sapling) set the overwintered bit and add a version group id and expiry
// height; v5 (NU5, ZIP 225) reorders the header and adds Orchard; v6 (NU6.3)
// appends an Ironwood bundle, laid out as Orchard's.
const (
	overwinterGroupID = 0x03C48270
	saplingGroupID    = 0x892F2085
	nu5GroupID        = 0x26A7270A
	nu63GroupID       = 0xD884B698 // v6 (NU6.3): v5 plus an Ironwood bundle

	jsFieldsSize   = 8 + 8 + 32 + 2*32 + 2*32 + 32 + 32 + 2*32 + 2*601 // JoinSplit without its proof
	bctvProofSize  = 296                                               // PHGR13 proofs of v2/v3 JoinSplits
	grothProofSize = 192

	saplingSpendV4  = 32 + 32 + 32 + 32 + grothProofSize + 64 // cv, anchor, nullifier, rk, proof, spendAuthSig
	saplingOutputV4 = 32 + 32 + 32 + 580 + 80 + grothProofSize
	saplingSpendV5  = 32 + 32 + 32 // cv, nullifier, rk
	saplingOutputV5 = 32 + 32 + 32 + 580 + 80
	orchardAction   = 32 + 32 + 32 + 32 + 32 + 580 + 80 // cv, nullifier, rk, cmx, epk, enc, out
	encCiphertext   = 580
)

var errShort = errors.New("unexpected end of data")

// reader walks a serialized tx with bounds checks; the first error sticks.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = errShort
		return nil
	}
	out := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return out
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) i64() int64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// compact reads a CompactSize count whose items take at least unit bytes
// each, so that a forged count cannot make the caller allocate much.
func (r *reader) compact(unit int) int {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	var v uint64
	switch b[0] {
	case 0xfd:
		if x := r.bytes(2); x != nil {
			v = uint64(binary.LittleEndian.Uint16(x))
		}
	case 0xfe:
		if x := r.bytes(4); x != nil {
			v = uint64(binary.LittleEndian.Uint32(x))
		}
	case 0xff:
		if x := r.bytes(8); x != nil {
			v = binary.LittleEndian.Uint64(x)
		}
	default:
		v = uint64(b[0])
	}
	if r.err != nil {
		return 0
	}
	if unit < 1 {
		unit = 1
	}
	if v > uint64(len(r.b)-r.off)/uint64(unit) {
		r.err = fmt.Errorf("count %d exceeds the remaining %d bytes", v, len(r.b)-r.off)
		return 0
	}
	return int(v)
}

// tin and tout are a transparent input and output with their raw bytes.
type tin struct {
	prevHash  []byte // internal byte order
	prevIndex uint32
	script    []byte
	sequence  uint32
	outpoint  []byte // 36 bytes as serialized
}

type tout struct {
	value  int64
	script []byte
	raw    []byte // value and length-prefixed script as serialized
}

// joinSplit is the part of a Sprout JoinSplit that moves transparent value.
type joinSplit struct {
	vpubOld, vpubNew int64
}

// ztx is a decoded Zcash tx: the transparent part and what the shielded
// parts add to the value balance, plus what ZIP 244 hashes for v5 txids.
type ztx struct {
	header         uint32
	version        int32
	overwintered   bool
	groupID        uint32
	branchID       uint32
	lockTime       uint32
	expiry         uint32
	vin            []tin
	vout           []tout
	joinSplits     []joinSplit
	saplingBalance int64
	saplingSpends  int
	saplingOutputs int
	orchard        actionBundle
	ironwood       actionBundle // v6 only
	// v5 pieces hashed into the txid (ZIP 244).
	saplingAnchor []byte
	saplingSpendV [][]byte // cv||nullifier||rk per spend
	saplingOutV   [][]byte // cv||cmu||epk||enc||out per output
	size          int
}

// actionBundle is an Orchard-protocol bundle (Orchard's, or v6's Ironwood).
type actionBundle struct {
	actions [][]byte // cv||nullifier||rk||cmx||epk||enc||out per action
	flags   byte
	balance int64
	anchor  []byte
}

// decodeTx decodes one tx from the start of raw; it returns the tx and its length.
func decodeTx(raw []byte) (*ztx, error) {
	r := &reader{b: raw}
	t := &ztx{header: r.u32()}
	t.overwintered = t.header>>31 == 1
	t.version = int32(t.header & 0x7fffffff)
	if t.overwintered {
		t.groupID = r.u32()
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case !t.overwintered && t.version >= 1 && t.version <= 2:
		decodeLegacy(r, t)
	case t.overwintered && t.version == 3 && t.groupID == overwinterGroupID,
		t.overwintered && t.version == 4 && t.groupID == saplingGroupID:
		decodeV3V4(r, t)
	case t.overwintered && t.version == 5 && t.groupID == nu5GroupID,
		t.overwintered && t.version == 6 && t.groupID == nu63GroupID:
		decodeV5(r, t)
	default:
		return nil, fmt.Errorf("unsupported tx version %d (overwintered %v, version group %08x)", t.version, t.overwintered, t.groupID)
	}
	if r.err != nil {
		return nil, fmt.Errorf("v%d tx: %w", t.version, r.err)
	}
	t.size = r.off
	return t, nil
}

func decodeTransparent(r *reader, t *ztx) {
	n := r.compact(41)
	t.vin = make([]tin, n)
	for i := range t.vin {
		op := r.bytes(36)
		in := &t.vin[i]
		if op != nil {
			in.outpoint, in.prevHash, in.prevIndex = op, op[:32], binary.LittleEndian.Uint32(op[32:])
		}
		in.script = r.bytes(r.compact(1))
		in.sequence = r.u32()
	}
	n = r.compact(9)
	t.vout = make([]tout, n)
	for i := range t.vout {
		start := r.off
		o := &t.vout[i]
		o.value = r.i64()
		o.script = r.bytes(r.compact(1))
		if r.err == nil {
			o.raw = r.b[start:r.off:r.off]
		}
	}
}

func decodeLegacy(r *reader, t *ztx) {
	decodeTransparent(r, t)
	t.lockTime = r.u32()
	if t.version == 2 {
		decodeJoinSplits(r, t, bctvProofSize)
	}
}

func decodeV3V4(r *reader, t *ztx) {
	decodeTransparent(r, t)
	t.lockTime = r.u32()
	t.expiry = r.u32()
	proof := bctvProofSize
	if t.version == 4 {
		proof = grothProofSize
		t.saplingBalance = r.i64()
		t.saplingSpends = r.compact(saplingSpendV4)
		r.bytes(t.saplingSpends * saplingSpendV4)
		t.saplingOutputs = r.compact(saplingOutputV4)
		r.bytes(t.saplingOutputs * saplingOutputV4)
	}
	decodeJoinSplits(r, t, proof)
	if t.saplingSpends+t.saplingOutputs > 0 {
		r.bytes(64) // bindingSig
	}
}

func decodeJoinSplits(r *reader, t *ztx, proof int) {
	n := r.compact(jsFieldsSize + proof)
	t.joinSplits = make([]joinSplit, n)
	for i := range t.joinSplits {
		t.joinSplits[i] = joinSplit{vpubOld: r.i64(), vpubNew: r.i64()}
		r.bytes(jsFieldsSize - 16 + proof)
	}
	if n > 0 {
		r.bytes(32 + 64) // joinSplitPubKey, joinSplitSig
	}
}

// Long: the v5 layout is one flat sequence of ZIP 225 fields, easier to
// check against the spec in one piece than split up.
func decodeV5(r *reader, t *ztx) {
	t.branchID = r.u32()
	t.lockTime = r.u32()
	t.expiry = r.u32()
	decodeTransparent(r, t)
	t.saplingSpends = r.compact(saplingSpendV5)
	t.saplingSpendV = make([][]byte, t.saplingSpends)
	for i := range t.saplingSpendV {
		t.saplingSpendV[i] = r.bytes(saplingSpendV5)
	}
	t.saplingOutputs = r.compact(saplingOutputV5)
	t.saplingOutV = make([][]byte, t.saplingOutputs)
	for i := range t.saplingOutV {
		t.saplingOutV[i] = r.bytes(saplingOutputV5)
	}
	if t.saplingSpends+t.saplingOutputs > 0 {
		t.saplingBalance = r.i64()
	}
	if t.saplingSpends > 0 {
		t.saplingAnchor = r.bytes(32)
	}
	r.bytes(t.saplingSpends * (grothProofSize + 64)) // spend proofs and spendAuthSigs
	r.bytes(t.saplingOutputs * grothProofSize)       // output proofs
	if t.saplingSpends+t.saplingOutputs > 0 {
		r.bytes(64) // bindingSigSapling
	}
	t.orchard = decodeActions(r)
	if t.version == 6 {
		t.ironwood = decodeActions(r)
	}
}

// decodeActions reads an Orchard-protocol bundle (ZIP 225's Orchard fields).
func decodeActions(r *reader) actionBundle {
	var b actionBundle
	b.actions = make([][]byte, r.compact(orchardAction))
	for i := range b.actions {
		b.actions[i] = r.bytes(orchardAction)
	}
	if len(b.actions) > 0 {
		if f := r.bytes(1); f != nil {
			b.flags = f[0]
		}
		b.balance = r.i64()
		b.anchor = r.bytes(32)
		r.bytes(r.compact(1))           // proofs
		r.bytes(len(b.actions)*64 + 64) // spendAuthSigs, bindingSig
	}
	return b
}

// valueBalance is the net value entering the transparent part from the
// shielded pools: Sapling's, Orchard's and Ironwood's balances plus each JoinSplit's
// vpub_new - vpub_old. ok is false when the sum leaves int64 (invalid tx).
func (t *ztx) valueBalance() (int64, bool) {
	sum := t.saplingBalance
	ok := addOK(&sum, t.orchard.balance)
	ok = addOK(&sum, t.ironwood.balance) && ok
	for _, js := range t.joinSplits {
		ok = addOK(&sum, js.vpubNew) && ok
		ok = addOK(&sum, -js.vpubOld) && ok && js.vpubOld != math.MinInt64
	}
	return sum, ok
}

func addOK(sum *int64, v int64) bool {
	s := *sum + v
	if (v > 0 && s < *sum) || (v < 0 && s > *sum) {
		return false
	}
	*sum = s
	return true
}
