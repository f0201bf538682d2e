package dash

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/btcsuite/btcd/chainhash/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// DIP2 special tx types (Dash Core's TxType) and the names dashd's JSON
// gives their payloads.
const (
	TypeProRegTx    = 1
	TypeProUpServTx = 2
	TypeProUpRegTx  = 3
	TypeProUpRevTx  = 4
	TypeCbTx        = 5
	TypeQcTx        = 6
	TypeMnHfTx      = 7
	TypeAssetLock   = 8
	TypeAssetUnlock = 9
)

var typeNames = map[uint16]string{
	TypeProRegTx: "proRegTx", TypeProUpServTx: "proUpServTx", TypeProUpRegTx: "proUpRegTx",
	TypeProUpRevTx: "proUpRevTx", TypeCbTx: "cbTx", TypeQcTx: "qcTx", TypeMnHfTx: "mnhfTx",
	TypeAssetLock: "assetLockTx", TypeAssetUnlock: "assetUnlockTx",
}

// maxPayload is Dash Core's MAX_TX_EXTRA_PAYLOAD; decodeSpecial reports
// larger payloads but the tx still decodes (consensus, not parsing, limits it).
const maxPayload = 10000

// Special is a DIP2 special tx as the API shows it in the tx's
// coinSpecific: its type, the raw payload, and the decoded payload for the
// types whose fields matter to an explorer (CbTx, asset lock and unlock).
type Special struct {
	Type        uint16       `json:"type"`
	TypeName    string       `json:"typeName"`
	PayloadSize int          `json:"extraPayloadSize"`
	Payload     string       `json:"extraPayload"`
	CbTx        *CbTx        `json:"cbTx,omitempty"`
	AssetLock   *AssetLock   `json:"assetLockTx,omitempty"`
	AssetUnlock *AssetUnlock `json:"assetUnlockTx,omitempty"`
	// PayloadError says why a payload of a decoded type did not decode;
	// the tx itself is still valid to the parser.
	PayloadError string `json:"payloadError,omitempty"`
}

// CbTx is the DIP4 coinbase payload. Hashes are in display order, as
// dashd shows them; amounts are decimal strings of duffs, as Blockbook
// shows amounts.
type CbTx struct {
	Version           uint16  `json:"version"`
	Height            uint32  `json:"height"`
	MerkleRootMNList  string  `json:"merkleRootMNList"`
	MerkleRootQuorums string  `json:"merkleRootQuorums,omitempty"`
	BestCLHeightDiff  *uint64 `json:"bestCLHeightDiff,omitempty"`
	BestCLSignature   string  `json:"bestCLSignature,omitempty"`
	CreditPoolBalance string  `json:"creditPoolBalance,omitempty"`
}

// AssetLock is the DIP27 asset lock payload: the Platform credit outputs
// funded by the tx's OP_RETURN output. They are not UTXOs and are not
// indexed; the locked value is already an output of the tx, so values and
// fees need nothing extra.
type AssetLock struct {
	Version       uint8          `json:"version"`
	CreditOutputs []CreditOutput `json:"creditOutputs"`
}

// CreditOutput is one credit output of an asset lock.
type CreditOutput struct {
	Value     string   `json:"value"`
	Hex       string   `json:"hex"`
	Addresses []string `json:"addresses"`
}

// AssetUnlock is the DIP27 asset unlock (withdrawal) payload. The tx has no
// inputs: its outputs and Fee come from the Platform credit pool.
type AssetUnlock struct {
	Version         uint8  `json:"version"`
	Index           uint64 `json:"index"`
	Fee             string `json:"fee"`
	RequestedHeight uint32 `json:"requestedHeight"`
	QuorumHash      string `json:"quorumHash"`
	QuorumSig       string `json:"quorumSig"`
	fee             uint64
}

// decodeSpecial describes a special tx's payload. It never fails: an
// unknown type or a payload that does not decode is shown as hex.
func (p *Parser) decodeSpecial(typ uint16, payload []byte) *Special {
	s := &Special{Type: typ, TypeName: typeNames[typ], PayloadSize: len(payload), Payload: hex.EncodeToString(payload)}
	if s.TypeName == "" {
		s.TypeName = "type" + strconv.Itoa(int(typ))
	}
	var err error
	switch {
	case len(payload) > maxPayload:
		err = fmt.Errorf("payload of %d bytes exceeds %d", len(payload), maxPayload)
	case typ == TypeCbTx:
		s.CbTx, err = decodeCbTx(payload)
	case typ == TypeAssetLock:
		s.AssetLock, err = p.decodeAssetLock(payload)
	case typ == TypeAssetUnlock:
		s.AssetUnlock, err = decodeAssetUnlock(payload)
	}
	if err != nil {
		s.PayloadError = err.Error()
	}
	return s
}

// DecodePayload describes the payload of a special tx of type typ, as the
// parser does for the tx's coinSpecific.
func (p *Parser) DecodePayload(typ uint16, payload []byte) *Special {
	return p.decodeSpecial(typ, payload)
}

func decodeCbTx(b []byte) (*CbTx, error) {
	r := payloadReader{b: b}
	c := &CbTx{Version: r.u16(), Height: r.u32(), MerkleRootMNList: r.hash()}
	if c.Version >= 2 {
		c.MerkleRootQuorums = r.hash()
	}
	if c.Version >= 3 {
		diff := r.varInt()
		c.BestCLHeightDiff = &diff
		c.BestCLSignature = hex.EncodeToString(r.bytes(96))
		c.CreditPoolBalance = strconv.FormatInt(int64(r.u64()), 10) //nolint:gosec // dashd's int64 amount
	}
	return c, r.done("cbTx")
}

func (p *Parser) decodeAssetLock(b []byte) (*AssetLock, error) {
	r := payloadReader{b: b}
	a := &AssetLock{Version: r.u8()}
	n := r.varInt()
	// Each credit output takes at least 9 bytes, which bounds the allocation.
	if n > uint64(len(r.b))/9 {
		return nil, fmt.Errorf("assetLockTx: %d credit outputs in %d bytes", n, len(r.b))
	}
	a.CreditOutputs = make([]CreditOutput, 0, n)
	for range n {
		v := r.u64()
		script := r.bytes(int(min(r.varInt(), uint64(len(r.b)+1)))) //nolint:gosec // bounded by the payload
		if r.err != nil {
			break
		}
		addrs, _ := p.OutputAddresses(script)
		a.CreditOutputs = append(a.CreditOutputs, CreditOutput{
			Value: strconv.FormatInt(int64(v), 10), Hex: hex.EncodeToString(script), Addresses: addrs, //nolint:gosec // dashd's int64 amount
		})
	}
	return a, r.done("assetLockTx")
}

func decodeAssetUnlock(b []byte) (*AssetUnlock, error) {
	r := payloadReader{b: b}
	a := &AssetUnlock{Version: r.u8(), Index: r.u64()}
	a.fee = uint64(r.u32())
	a.Fee = strconv.FormatUint(a.fee, 10)
	a.RequestedHeight = r.u32()
	a.QuorumHash = r.hash()
	a.QuorumSig = hex.EncodeToString(r.bytes(96))
	if err := r.done("assetUnlockTx"); err != nil {
		return nil, err
	}
	return a, nil
}

// payloadReader reads little-endian fields; the first short read sets err
// and later reads return zero values.
type payloadReader struct {
	b   []byte
	err error
}

var errShort = errors.New("payload too short")

func (r *payloadReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errShort
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *payloadReader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *payloadReader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *payloadReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *payloadReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// hash reads a uint256 and returns it in display (reversed) order.
func (r *payloadReader) hash() string {
	b := r.bytes(32)
	if b == nil {
		return ""
	}
	var h chainhash.Hash
	copy(h[:], b)
	return btc.DisplayHash(h).String()
}

// varInt reads a compact size (Bitcoin's CompactSize).
func (r *payloadReader) varInt() uint64 {
	switch first := r.u8(); first {
	case 0xfd:
		return uint64(r.u16())
	case 0xfe:
		return uint64(r.u32())
	case 0xff:
		return r.u64()
	default:
		return uint64(first)
	}
}

// done reports a short read or bytes left over after the known fields.
func (r *payloadReader) done(what string) error {
	if r.err != nil {
		return fmt.Errorf("%s: %w", what, r.err)
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%s: %d bytes after the payload's fields", what, len(r.b))
	}
	return nil
}
