package ltc

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/address/v2/base58"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Parser decodes Litecoin blocks and txs (MWEB serialization included);
// addresses are Bitcoin's scripts rendered with Litecoin's parameters.
type Parser struct {
	*btc.Parser
	// legacyP2SH is the base58 version of Litecoin Core's SCRIPT_ADDRESS
	// (Bitcoin's 3… / 2… P2SH form), accepted besides SCRIPT_ADDRESS2.
	legacyP2SH byte
}

var _ bchain.UtxoParser = (*Parser)(nil)

// NewParser returns a Litecoin parser for one network.
func NewParser(params *chaincfg.Params) *Parser {
	legacy := byte(196)
	if params.Net == MainnetMagic {
		legacy = 5
	}
	return &Parser{Parser: btc.NewParser(params), legacyP2SH: legacy}
}

// AddrDescFromAddress validates an address for this network. Besides what
// Bitcoin's parser takes, Litecoin Core and Blockbook accept P2SH addresses
// in Bitcoin's base58 version (Litecoin's old form; they name the same
// script as the M… / Q… form outputs show) and base58 addresses that merely
// look like bech32 ones ("LTC1…", which btcd's decoder takes for bech32).
func (p *Parser) AddrDescFromAddress(addr string) (bchain.AddrDesc, error) {
	desc, err := p.Parser.AddrDescFromAddress(addr)
	if err == nil || len(addr) > 40 {
		return desc, err
	}
	payload, version, cerr := base58.CheckDecode(addr)
	if cerr != nil || len(payload) != 20 {
		return nil, err
	}
	switch version {
	case p.Params().PubKeyHashAddrID:
		script := make([]byte, 0, 25)
		script = append(script, txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20)
		script = append(script, payload...)
		return append(script, txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG), nil
	case p.Params().ScriptHashAddrID, p.legacyP2SH:
		script := make([]byte, 0, 23)
		script = append(script, txscript.OP_HASH160, txscript.OP_DATA_20)
		script = append(script, payload...)
		return append(script, txscript.OP_EQUAL), nil
	}
	return nil, err
}

// ParseBlock decodes a block as Litecoin Core serializes it to peers and
// RPC: header, canonical txs (the HogEx last in MWEB blocks) and, after a
// HogEx, the MWEB extension block, which is checked and skipped. The
// block's txs are the canonical ones, as Core's nTx counts them.
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) {
	blk, _, err := parseBlock(raw)
	return blk, err
}

// parseBlock is ParseBlock that also returns what the MWEB extension
// block holds (nil without one).
func parseBlock(raw []byte) (*bchain.Block, *mwebSummary, error) {
	var ext *mwebSummary
	blk, err := btc.ParseBlockWith(raw, btc.BlockCodec{
		Tx: decodeTx,
		Trailer: func(rest []byte, blk *bchain.Block) error {
			if len(blk.Txs) < 2 || !hogEx(&blk.Txs[len(blk.Txs)-1]) {
				return errors.New("extension data without a HogEx as the last tx")
			}
			c := &cursor{b: rest}
			s, err := c.mwebBlock()
			if err != nil {
				return fmt.Errorf("mweb block: %w", err)
			}
			if c.remaining() != 0 {
				return fmt.Errorf("%d bytes after the mweb block", c.remaining())
			}
			ext = s
			return nil
		},
	})
	if err != nil {
		return nil, nil, err
	}
	if ext == nil && len(blk.Txs) >= 2 && hogEx(&blk.Txs[len(blk.Txs)-1]) {
		return nil, nil, fmt.Errorf("%w: block ends with a HogEx but has no mweb block", bchain.ErrInvalidData)
	}
	for i := range blk.Txs[:len(blk.Txs)-1] {
		if hogEx(&blk.Txs[i]) {
			return nil, nil, fmt.Errorf("%w: HogEx at tx %d, not last", bchain.ErrInvalidData, i)
		}
	}
	return blk, ext, nil
}

// ParseTx decodes one tx in Litecoin's serialization; trailing bytes are
// an error, and so is an MWEB-only tx, which has no canonical part to show.
func (p *Parser) ParseTx(raw []byte) (*bchain.Tx, error) {
	tx := new(bchain.Tx)
	n, err := decodeTx(raw, tx)
	if err != nil {
		if errors.Is(err, errMWEBOnly) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: tx: %v", bchain.ErrInvalidData, err)
	}
	if n != len(raw) {
		return nil, fmt.Errorf("%w: tx has %d trailing bytes", bchain.ErrInvalidData, len(raw)-n)
	}
	return tx, nil
}
