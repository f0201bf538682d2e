package ltc

import (
	"errors"
	"fmt"
)

// This file decodes Litecoin Core's MWEB serialization (libmw's models and
// src/mweb/mweb_models.h of Litecoin Core 0.21.2+) far enough to skip it
// exactly, to know that it is well-formed, and to count what it holds.

// Fixed sizes of libmw's serialized types.
const (
	mwHashLen       = 32  // mw::Hash, BlindingFactor
	mwCommitLen     = 33  // Commitment
	mwPubKeyLen     = 33  // PublicKey (compressed)
	mwSignatureLen  = 64  // Signature
	mwRangeProofLen = 675 // RangeProof
	// maxVectorLen is Core's MAX_SIZE, the bound of any CompactSize length.
	maxVectorLen = 0x02000000
)

// Feature bits of libmw's inputs, output messages and kernels.
const (
	inputStealthKey   = 0x01
	inputExtraData    = 0x02
	outputStandard    = 0x01
	outputExtraData   = 0x02
	kernelFee         = 0x01
	kernelPegIn       = 0x02
	kernelPegOut      = 0x04
	kernelHeightLock  = 0x08
	kernelStealth     = 0x10
	kernelExtraData   = 0x20
	kernelAllFeatures = 0x3f
)

var errTruncated = errors.New("truncated")

// cursor reads Core's serialization from a byte slice; every read checks
// bounds, so malformed input gives an error, never a panic.
type cursor struct {
	b   []byte
	off int
}

func (c *cursor) remaining() int { return len(c.b) - c.off }

func (c *cursor) take(n int) ([]byte, error) {
	if n < 0 || n > c.remaining() {
		return nil, fmt.Errorf("%w: need %d bytes at offset %d, have %d", errTruncated, n, c.off, c.remaining())
	}
	s := c.b[c.off : c.off+n]
	c.off += n
	return s, nil
}

func (c *cursor) skip(n int) error { _, err := c.take(n); return err }

func (c *cursor) byte() (byte, error) {
	s, err := c.take(1)
	if err != nil {
		return 0, err
	}
	return s[0], nil
}

// compactSize reads Core's CompactSize length prefix, rejecting
// non-canonical encodings and lengths above MAX_SIZE as Core does.
func (c *cursor) compactSize() (int, error) {
	first, err := c.byte()
	if err != nil {
		return 0, err
	}
	var n uint64
	var min uint64
	switch first {
	case 0xfd:
		s, err := c.take(2)
		if err != nil {
			return 0, err
		}
		n, min = uint64(s[0])|uint64(s[1])<<8, 0xfd
	case 0xfe:
		s, err := c.take(4)
		if err != nil {
			return 0, err
		}
		n, min = uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24, 0x10000
	case 0xff:
		s, err := c.take(8)
		if err != nil {
			return 0, err
		}
		for i := 7; i >= 0; i-- {
			n = n<<8 | uint64(s[i])
		}
		min = 0x100000000
	default:
		return int(first), nil
	}
	if n < min {
		return 0, fmt.Errorf("non-canonical size encoding at offset %d", c.off)
	}
	if n > maxVectorLen {
		return 0, fmt.Errorf("size %d too large at offset %d", n, c.off)
	}
	return int(n), nil
}

// bytesVec reads a CompactSize-prefixed byte vector.
func (c *cursor) bytesVec() ([]byte, error) {
	n, err := c.compactSize()
	if err != nil {
		return nil, err
	}
	return c.take(n)
}

// varInt reads Core's VARINT (base-128, most significant group first,
// each continuation adding one) in NONNEGATIVE_SIGNED mode: the value must
// fit an int64.
func (c *cursor) varInt() (int64, error) {
	var n uint64
	for {
		b, err := c.byte()
		if err != nil {
			return 0, err
		}
		if n > (1<<63-1)>>7 {
			return 0, fmt.Errorf("varint overflow at offset %d", c.off)
		}
		n = n<<7 | uint64(b&0x7f)
		if b&0x80 == 0 {
			return int64(n), nil
		}
		if n == 1<<63-1 {
			return 0, fmt.Errorf("varint overflow at offset %d", c.off)
		}
		n++
	}
}

// mwebSummary is what the decoder learns from MWEB data.
type mwebSummary struct {
	Height              int64
	Inputs, Outputs     int
	Kernels             int
	PegIns, PegOuts     int
	PegInValue          int64
	PegOutScripts       [][]byte
	PegOutValues        []int64
	HasBlock, HasTxBody bool
}

// mwebBlock reads MWEB::Block: an optional-pointer flag, then the
// extension block's header and body.
func (c *cursor) mwebBlock() (*mwebSummary, error) {
	set, err := c.optionalFlag()
	if err != nil || !set {
		return &mwebSummary{}, err
	}
	s := &mwebSummary{HasBlock: true}
	if s.Height, err = c.varInt(); err != nil {
		return nil, fmt.Errorf("mweb header height: %w", err)
	}
	// Output, kernel and leafset roots, kernel and stealth offsets.
	if err := c.skip(5 * mwHashLen); err != nil {
		return nil, fmt.Errorf("mweb header: %w", err)
	}
	for _, what := range []string{"output", "kernel"} {
		if _, err := c.varInt(); err != nil {
			return nil, fmt.Errorf("mweb header %s MMR size: %w", what, err)
		}
	}
	if err := c.txBody(s); err != nil {
		return nil, err
	}
	return s, nil
}

// mwebTx reads MWEB::Tx as attached to a tx outside blocks: an optional
// pointer to kernel and stealth offsets and a body with at least one
// kernel. A null pointer (flag 0) marks the HogEx.
func (c *cursor) mwebTx() (*mwebSummary, error) {
	set, err := c.optionalFlag()
	if err != nil || !set {
		return &mwebSummary{}, err
	}
	if err := c.skip(2 * mwHashLen); err != nil {
		return nil, fmt.Errorf("mweb tx offsets: %w", err)
	}
	s := &mwebSummary{HasTxBody: true}
	if err := c.txBody(s); err != nil {
		return nil, err
	}
	if s.Kernels == 0 {
		return nil, errors.New("mweb tx without kernels")
	}
	return s, nil
}

// optionalFlag reads OptionalPtr's presence byte. Core treats any value
// but 1 as absent and would then misread what follows; only 0 and 1 are
// well-formed.
func (c *cursor) optionalFlag() (bool, error) {
	b, err := c.byte()
	if err != nil {
		return false, fmt.Errorf("mweb presence flag: %w", err)
	}
	if b > 1 {
		return false, fmt.Errorf("mweb presence flag %d", b)
	}
	return b == 1, nil
}

// txBody reads TxBody: vectors of inputs, outputs and kernels.
func (c *cursor) txBody(s *mwebSummary) error {
	var err error
	if s.Inputs, err = c.vector("input", c.mwInput); err != nil {
		return err
	}
	if s.Outputs, err = c.vector("output", c.mwOutput); err != nil {
		return err
	}
	s.Kernels, err = c.vector("kernel", func() error { return c.mwKernel(s) })
	return err
}

func (c *cursor) vector(what string, item func() error) (int, error) {
	n, err := c.compactSize()
	if err != nil {
		return 0, fmt.Errorf("mweb %s count: %w", what, err)
	}
	for i := 0; i < n; i++ {
		if err := item(); err != nil {
			return 0, fmt.Errorf("mweb %s %d: %w", what, i, err)
		}
	}
	return n, nil
}

// mwInput reads Input: features, output id, commitment, output public
// key, optional input public key and extra data, signature.
func (c *cursor) mwInput() error {
	f, err := c.byte()
	if err != nil {
		return err
	}
	if err := c.skip(mwHashLen + mwCommitLen + mwPubKeyLen); err != nil {
		return err
	}
	if f&inputStealthKey != 0 {
		if err := c.skip(mwPubKeyLen); err != nil {
			return err
		}
	}
	if f&inputExtraData != 0 {
		if _, err := c.bytesVec(); err != nil {
			return err
		}
	}
	return c.skip(mwSignatureLen)
}

// mwOutput reads Output: commitment, sender and receiver public keys, the
// output message, range proof, signature.
func (c *cursor) mwOutput() error {
	if err := c.skip(mwCommitLen + 2*mwPubKeyLen); err != nil {
		return err
	}
	f, err := c.byte()
	if err != nil {
		return err
	}
	if f&outputStandard != 0 {
		// Key exchange public key, view tag, masked value, masked nonce.
		if err := c.skip(mwPubKeyLen + 1 + 8 + 16); err != nil {
			return err
		}
	}
	if f&outputExtraData != 0 {
		if _, err := c.bytesVec(); err != nil {
			return err
		}
	}
	return c.skip(mwRangeProofLen + mwSignatureLen)
}

// mwKernel reads Kernel: features, then the fields the features select,
// excess commitment and signature. Peg-ins and peg-outs are counted.
func (c *cursor) mwKernel(s *mwebSummary) error {
	f, err := c.byte()
	if err != nil {
		return err
	}
	if f&^kernelAllFeatures != 0 {
		return fmt.Errorf("unknown kernel features %#x", f)
	}
	if f&kernelFee != 0 {
		if _, err := c.varInt(); err != nil {
			return fmt.Errorf("fee: %w", err)
		}
	}
	if f&kernelPegIn != 0 {
		v, err := c.varInt()
		if err != nil {
			return fmt.Errorf("peg-in amount: %w", err)
		}
		s.PegIns++
		s.PegInValue += v
	}
	if f&kernelPegOut != 0 {
		if _, err := c.vector("peg-out", func() error { return c.pegOut(s) }); err != nil {
			return err
		}
	}
	if f&kernelHeightLock != 0 {
		if _, err := c.varInt(); err != nil {
			return fmt.Errorf("lock height: %w", err)
		}
	}
	if f&kernelStealth != 0 {
		if err := c.skip(mwPubKeyLen); err != nil {
			return err
		}
	}
	if f&kernelExtraData != 0 {
		if _, err := c.bytesVec(); err != nil {
			return err
		}
	}
	return c.skip(mwCommitLen + mwSignatureLen)
}

// pegOut reads PegOutCoin: amount and a non-empty scriptPubKey.
func (c *cursor) pegOut(s *mwebSummary) error {
	v, err := c.varInt()
	if err != nil {
		return err
	}
	script, err := c.bytesVec()
	if err != nil {
		return err
	}
	if len(script) == 0 {
		return errors.New("empty peg-out script")
	}
	s.PegOuts++
	s.PegOutValues = append(s.PegOutValues, v)
	s.PegOutScripts = append(s.PegOutScripts, script)
	return nil
}
