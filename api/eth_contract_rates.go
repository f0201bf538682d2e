package api

import (
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// ContractInfoRates is Blockbook's rates of a fungible token on
// getContractInfo: one whole token in coins (baseRate) and, when a
// currency is asked, in that currency (secondaryRate).
type ContractInfoRates struct {
	BaseRate      float64 `json:"baseRate,omitempty"`
	Currency      string  `json:"currency,omitempty"`
	SecondaryRate float64 `json:"secondaryRate,omitempty"`
}

// contractRates fills getContractInfo's rates as Blockbook does: only for
// ERC20 contracts with fiat rates on; the current ticker counts only when
// it has both the token and the asked currency; without a base rate and
// without a currency there are no rates, and an asked currency is echoed
// (lower-cased) even when nothing is known of it.
func (s *EthService) contractRates(ci *ContractInfo, currency string) *ContractInfoRates {
	if ci.Standard != bchain.TokenERC20.String() || !s.cfg.FiatRates {
		return nil
	}
	currency = strings.ToLower(strings.TrimSpace(currency))
	token := normalizeToken(ci.Contract)
	t, err := s.currentTokenTicker(token, currency)
	if err != nil {
		s.log.Warn("reading the current fiat rates failed", "err", err)
		t = nil
	}
	var base float64
	found := false
	if t != nil {
		base, found = t.TokenRates[token]
	}
	if !found && currency == "" {
		return nil
	}
	out := &ContractInfoRates{}
	if found {
		out.BaseRate = base
	}
	if currency != "" {
		out.Currency = currency
		if t != nil {
			if r := tokenRateIn(t, token, currency); r > 0 {
				out.SecondaryRate = r
			}
		}
	}
	return out
}
