package ltc

import (
	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Parser decodes Litecoin blocks and txs; addresses are Bitcoin's scripts
// rendered with Litecoin's parameters.
type Parser struct {
	*btc.Parser
}

var _ bchain.UtxoParser = (*Parser)(nil)

// NewParser returns a Litecoin parser for one network.
func NewParser(params *chaincfg.Params) *Parser {
	return &Parser{Parser: btc.NewParser(params)}
}
