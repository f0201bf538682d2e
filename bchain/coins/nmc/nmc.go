// Package nmc registers Namecoin: Bitcoin's tx format (SegWit included,
// bech32 prefix "nc"), merge-mined (AuxPoW) headers, and name operations.
// An output carrying a name operation is a name prefix followed by an
// ordinary script; it is indexed under the address of that script and its
// operation is shown as the output's coinSpecific.
package nmc

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/auxpow"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// MainnetMagic is Namecoin's message start (f9 be b4 fe) as btcd reads it.
const MainnetMagic wire.BitcoinNet = 0xfeb4bef9

// MainNetParams are Namecoin Core's mainnet address versions (P2PKH 52,
// P2SH 13, WIF 180, bech32 "nc"), Bitcoin's BIP32 versions, and the genesis.
var MainNetParams = btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{
	Name: "namecoin", Net: MainnetMagic,
	Genesis:    "000000000062b72c5e2ceb45fbc8587e807c155b0da735e6483dfba2f0a9c770",
	PubKeyHash: 52, ScriptHash: 13, PrivateKey: 180, HRP: "nc", HDCoinType: 7,
})

func init() {
	btc.MustRegisterParams(MainNetParams)
	// Name, shortcut and ports follow Blockbook's namecoin.json.
	btc.Register("Namecoin", btc.Network{
		Params: MainNetParams, Shortcut: "NMC", Label: "Namecoin", Slip44: 7,
		PublicPort: 9139, InternalPort: 9039, NewParser: newParser,
	})
}

// Parser is Bitcoin's parser with AuxPoW blocks and name operations.
type Parser struct {
	*btc.Parser
}

// NewParser returns a Namecoin parser for the given network parameters.
func NewParser(params *chaincfg.Params) *Parser { return &Parser{Parser: btc.NewParser(params)} }

func newParser(params *chaincfg.Params, _ *bchain.Config) (bchain.UtxoParser, error) {
	return NewParser(params), nil
}

// ParseBlock decodes a serialized block, AuxPoW headers included, and
// describes the name operations of its outputs.
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) {
	blk, err := auxpow.ParseBlock(raw)
	if err != nil {
		return nil, err
	}
	for i := range blk.Txs {
		annotate(&blk.Txs[i])
	}
	return blk, nil
}

// ParseTx decodes one serialized transaction and describes its name
// operations.
func (p *Parser) ParseTx(raw []byte) (*bchain.Tx, error) {
	tx, err := p.Parser.ParseTx(raw)
	if err != nil {
		return nil, err
	}
	annotate(tx)
	return tx, nil
}

func annotate(tx *bchain.Tx) {
	for j := range tx.Vout {
		if op, _ := ParseNameScript(tx.Vout[j].Script); op != nil {
			tx.Vout[j].Specific = Specific{NameOp: op}
		}
	}
}

// OutputAddrDesc indexes a name output under the script after its name
// prefix (the owner's address); other outputs as on Bitcoin.
func (p *Parser) OutputAddrDesc(script []byte) bchain.AddrDesc {
	return p.Parser.OutputAddrDesc(addressScript(script))
}

// OutputAddresses renders the address a name output pays to; other
// outputs as on Bitcoin.
func (p *Parser) OutputAddresses(script []byte) ([]string, bool) {
	return p.Parser.OutputAddresses(addressScript(script))
}

// addressScript is the script after a name prefix, or script itself when
// it has none (or nothing follows the prefix, which Namecoin cannot spend
// normally: it is then indexed whole, like a non-standard script).
func addressScript(script []byte) []byte {
	if op, rest := ParseNameScript(script); op != nil && len(rest) > 0 {
		return rest
	}
	return script
}
