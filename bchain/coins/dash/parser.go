package dash

import (
	"bytes"
	"fmt"
	"io"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Parser decodes Dash blocks and txs; addresses are Bitcoin's with Dash's
// versions and no SegWit forms.
type Parser struct {
	*btc.Parser
}

var _ bchain.UtxoParser = (*Parser)(nil)

// NewParser returns a Dash parser for the given network parameters.
func NewParser(params *chaincfg.Params) *Parser {
	return &Parser{Parser: btc.NewParser(params)}
}

// ParseBlock decodes a block. Its Hash is left zero: Dash block ids are
// X11 hashes, which cannot be computed here (see the package comment).
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) {
	return btc.ParseBlockWith(raw, btc.BlockCodec{Header: decodeHeader, Tx: p.decodeTx})
}

// ParseTx decodes one serialized tx; trailing bytes are an error.
func (p *Parser) ParseTx(raw []byte) (*bchain.Tx, error) {
	return btc.ParseTxWith(raw, p.decodeTx)
}

// decodeHeader decodes the 80-byte header (Bitcoin's layout).
func decodeHeader(raw []byte, blk *bchain.Block) (int, error) {
	if len(raw) < wire.MaxBlockHeaderPayload {
		return 0, fmt.Errorf("%d bytes, want at least %d", len(raw), wire.MaxBlockHeaderPayload)
	}
	var h wire.BlockHeader
	if err := h.Deserialize(bytes.NewReader(raw[:wire.MaxBlockHeaderPayload])); err != nil {
		return 0, err
	}
	btc.HeaderToBlock(&h, raw[:wire.MaxBlockHeaderPayload:wire.MaxBlockHeaderPayload], blk)
	return wire.MaxBlockHeaderPayload, nil
}

// decodeTx decodes one tx from the start of raw: Bitcoin's encoding without
// witness data, then, for a special tx, its extra payload. The txid is the
// double SHA-256 of all of it, payload included.
func (p *Parser) decodeTx(raw []byte, tx *bchain.Tx) (int, error) {
	var mtx wire.MsgTx
	r := bytes.NewReader(raw)
	// Dash has no SegWit: a tx without inputs (quorum commitments, asset
	// unlocks) must not be read as a witness marker.
	if err := mtx.BtcDecode(r, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		return 0, err
	}
	var special *Special
	if typ := txType(mtx.Version); typ != 0 {
		size, err := wire.ReadVarInt(r, wire.ProtocolVersion)
		if err != nil {
			return 0, fmt.Errorf("special tx type %d: payload size: %w", typ, err)
		}
		if size > uint64(r.Len()) {
			return 0, fmt.Errorf("special tx type %d: payload of %d bytes, %d left", typ, size, r.Len())
		}
		start := len(raw) - r.Len()
		payload := raw[start : start+int(size)]
		if _, err := r.Seek(int64(size), io.SeekCurrent); err != nil {
			return 0, err
		}
		special = p.decodeSpecial(typ, payload)
	}
	n := len(raw) - r.Len()
	btc.TxFromWire(&mtx, raw[:n:n], tx)
	tx.Txid = btc.DisplayHash(chainhash.DoubleHashH(raw[:n]))
	tx.VSize = n
	if special != nil {
		// dashd shows the 16-bit version and the type apart.
		tx.Version = int32(uint32(mtx.Version) & 0xffff)
		tx.Specific = special
		if special.AssetUnlock != nil {
			// Credits withdrawn from Platform enter without inputs: the
			// outputs and the miner's fee come from the credit pool.
			tx.ValueBalance = assetUnlockInflow(tx, special.AssetUnlock.fee)
		}
	}
	return n, nil
}

// txType is the DIP2 special tx type of a serialized version field: the
// upper 16 bits when the lower 16, read as Dash Core's signed 16-bit
// version, are 3 or more.
func txType(version int32) uint16 {
	v := uint32(version)
	if int16(v&0xffff) < 3 { //nolint:gosec // the low half is Dash's int16 version
		return 0
	}
	return uint16(v >> 16)
}

func assetUnlockInflow(tx *bchain.Tx, fee uint64) int64 {
	sum := fee
	for _, o := range tx.Vout {
		sum += o.Value
	}
	return int64(sum) //nolint:gosec // bounded: outputs are consensus-bounded amounts
}

// witnessProgram reports scripts that are witness programs on Bitcoin: Dash
// gives them no address.
func witnessProgram(script []byte) bool {
	return txscript.IsWitnessProgram(script)
}

// AddressesFromAddrDesc renders a descriptor as Dash addresses; witness
// programs are plain non-standard scripts on Dash.
func (p *Parser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	if witnessProgram(desc) {
		return []string{}, false, nil
	}
	return p.Parser.AddressesFromAddrDesc(desc)
}

// OutputAddresses renders an output script for display (overridden with
// AddressesFromAddrDesc, as the embedded parser calls its own).
func (p *Parser) OutputAddresses(script []byte) ([]string, bool) {
	if witnessProgram(script) {
		return []string{}, false
	}
	return p.Parser.OutputAddresses(script)
}
