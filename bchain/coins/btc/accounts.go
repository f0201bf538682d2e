package btc

import (
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// P2PKHAccounts limits an account parser to P2PKH (BIP44) accounts, for
// coins without SegWit: the BIP49/BIP84/BIP86 key versions and descriptors
// the Bitcoin parser accepts would derive addresses no wallet of such a
// coin uses. nil stays nil.
func P2PKHAccounts(x bchain.XpubParser) bchain.XpubParser {
	if x == nil {
		return nil
	}
	return p2pkhAccounts{x}
}

type p2pkhAccounts struct{ bchain.XpubParser }

func (p p2pkhAccounts) ParseXpub(s string) (*bchain.XpubDescriptor, error) {
	d, err := p.XpubParser.ParseXpub(s)
	if err != nil {
		return nil, err
	}
	if d.ScriptType != bchain.XpubP2PKH {
		return nil, fmt.Errorf("%w: only P2PKH (BIP44) accounts exist on this chain", bchain.ErrInvalidXpub)
	}
	return d, nil
}
