package zec

import (
	"crypto/sha256"
	"encoding/binary"
)

// txid returns the tx id in internal byte order: the double SHA-256 of the
// serialization up to v4, the ZIP 244 digest tree for v5.
func (t *ztx) txid(raw []byte) [32]byte {
	if t.version < 5 {
		first := sha256.Sum256(raw[:t.size])
		return sha256.Sum256(first[:])
	}
	var branch [4]byte
	binary.LittleEndian.PutUint32(branch[:], t.branchID)
	var out [32]byte
	parts := [][]byte{t.headerDigest(), t.transparentDigest(), t.saplingDigest()}
	if t.version == 5 {
		parts = append(parts, actionsDigest(&t.orchard, orchardV5))
	} else { // v6 (ZIP 229 and the Ironwood pool)
		parts = append(parts, actionsDigest(&t.orchard, orchardV6), actionsDigest(&t.ironwood, ironwoodV6))
	}
	copy(out[:], personalHash("ZcashTxHash_"+string(branch[:]), parts...))
	return out
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

func (t *ztx) headerDigest() []byte {
	return personalHash("ZTxIdHeadersHash", le32(t.header), le32(t.groupID), le32(t.branchID), le32(t.lockTime), le32(t.expiry))
}

func (t *ztx) transparentDigest() []byte {
	if len(t.vin) == 0 && len(t.vout) == 0 {
		return personalHash("ZTxIdTranspaHash")
	}
	prev := newBlake2b(32, []byte("ZTxIdPrevoutHash"))
	seq := newBlake2b(32, []byte("ZTxIdSequencHash"))
	for _, in := range t.vin {
		_, _ = prev.Write(in.outpoint)
		_, _ = seq.Write(le32(in.sequence))
	}
	outs := newBlake2b(32, []byte("ZTxIdOutputsHash"))
	for _, o := range t.vout {
		_, _ = outs.Write(o.raw)
	}
	return personalHash("ZTxIdTranspaHash", prev.Sum(), seq.Sum(), outs.Sum())
}

// Long: each Sapling spend and output is split over three sub-digests
// (compact, memo, rest) in ZIP 244's order; listing them together keeps the
// byte offsets checkable against the spec in one place.
func (t *ztx) saplingDigest() []byte {
	if t.saplingSpends+t.saplingOutputs == 0 {
		return personalHash("ZTxIdSaplingHash")
	}
	var spends []byte
	if t.saplingSpends == 0 {
		spends = personalHash("ZTxIdSSpendsHash")
	} else {
		c := newBlake2b(32, []byte("ZTxIdSSpendCHash"))
		// v6 moves the anchor out of the txid (into the auth digest).
		person, anchor := "ZTxIdSSpendNHash", t.saplingAnchor
		if t.version >= 6 {
			person, anchor = "ZTxIdSSpendNH_v6", nil
		}
		n := newBlake2b(32, []byte(person))
		for _, s := range t.saplingSpendV { // cv 0:32, nullifier 32:64, rk 64:96
			_, _ = c.Write(s[32:64])
			_, _ = n.Write(s[0:32])
			_, _ = n.Write(anchor)
			_, _ = n.Write(s[64:96])
		}
		spends = personalHash("ZTxIdSSpendsHash", c.Sum(), n.Sum())
	}
	c := newBlake2b(32, []byte("ZTxIdSOutC__Hash"))
	m := newBlake2b(32, []byte("ZTxIdSOutM__Hash"))
	n := newBlake2b(32, []byte("ZTxIdSOutN__Hash"))
	for _, o := range t.saplingOutV { // cv 0:32, cmu 32:64, epk 64:96, enc 96:676, out 676:756
		enc := o[96 : 96+encCiphertext]
		_, _ = c.Write(o[32:96])
		_, _ = c.Write(enc[:52])
		_, _ = m.Write(enc[52:564])
		_, _ = n.Write(o[0:32])
		_, _ = n.Write(enc[564:])
		_, _ = n.Write(o[96+encCiphertext:])
	}
	outputs := personalHash("ZTxIdSOutputHash")
	if t.saplingOutputs > 0 {
		outputs = personalHash("ZTxIdSOutputHash", c.Sum(), m.Sum(), n.Sum())
	}
	return personalHash("ZTxIdSaplingHash", spends, outputs, le64(t.saplingBalance))
}

// actionDigests are the personalizations of an Orchard-protocol bundle's
// txid digest: the bundle, its actions' compact, memo and other parts, and
// whether the anchor is hashed (only v5 Orchard's).
type actionDigests struct {
	bundle, compact, memos, noncompact string
	anchor                             bool
}

var (
	orchardV5  = actionDigests{"ZTxIdOrchardHash", "ZTxIdOrcActCHash", "ZTxIdOrcActMHash", "ZTxIdOrcActNHash", true}
	orchardV6  = actionDigests{"ZTxIdOrchardH_v6", "ZTxIdOrcActCHash", "ZTxIdOrcActMHash", "ZTxIdOrcActNHash", false}
	ironwoodV6 = actionDigests{"ZTxIdIronwd_H_v6", "ZTxIdIrnActCH_v6", "ZTxIdIrnActMH_v6", "ZTxIdIrnActNH_v6", false}
)

func actionsDigest(b *actionBundle, d actionDigests) []byte {
	if len(b.actions) == 0 {
		return personalHash(d.bundle)
	}
	c := newBlake2b(32, []byte(d.compact))
	m := newBlake2b(32, []byte(d.memos))
	n := newBlake2b(32, []byte(d.noncompact))
	for _, a := range b.actions { // cv 0:32, nf 32:64, rk 64:96, cmx 96:128, epk 128:160, enc 160:740, out 740:820
		enc := a[160 : 160+encCiphertext]
		_, _ = c.Write(a[32:64])
		_, _ = c.Write(a[96:160])
		_, _ = c.Write(enc[:52])
		_, _ = m.Write(enc[52:564])
		_, _ = n.Write(a[0:32])
		_, _ = n.Write(a[64:96])
		_, _ = n.Write(enc[564:])
		_, _ = n.Write(a[160+encCiphertext:])
	}
	var anchor []byte
	if d.anchor {
		anchor = b.anchor
	}
	return personalHash(d.bundle, c.Sum(), m.Sum(), n.Sum(), []byte{b.flags}, le64(b.balance), anchor)
}
