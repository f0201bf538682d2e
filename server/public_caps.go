package server

import (
	"net/http"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// capabilityRoutes registers the REST routes of the optional parts of the
// service. A route whose capability the service lacks stays, and answers
// the capability's not-supported error at the point where the call would
// be made, so that checks which came first before (a missing xpub, the
// fee target) still do.
func (p *Public) capabilityRoutes() {
	p.handle("GET /api/v2/rawblock/{id}", "rawblock", func(r *http.Request) (any, error) {
		if p.caps.RawBlocks == nil {
			return nil, p.caps.NotSupported(api.CapRawBlocks)
		}
		return p.caps.RawBlocks.RawBlock(r.Context(), r.PathValue("id"))
	})
	p.handle("GET /api/v2/tx-specific/{txid}", "tx-specific", func(r *http.Request) (any, error) {
		if p.caps.TxSpecific == nil {
			return nil, p.caps.NotSupported(api.CapTxSpecific)
		}
		return p.caps.TxSpecific.TxSpecific(r.Context(), r.PathValue("txid"))
	})
	p.handle("GET /api/v2/rawtx/{txid}", "rawtx", func(r *http.Request) (any, error) {
		if p.caps.RawTxs == nil {
			return nil, p.caps.NotSupported(api.CapRawTxs)
		}
		return p.caps.RawTxs.RawTx(r.Context(), r.PathValue("txid"))
	})
	// Accounts: descriptors hold '/', so these take the rest of the path
	// (escaped or not), as Blockbook does.
	p.handle("GET /api/v2/xpub/{xpub...}", "xpub", func(r *http.Request) (any, error) {
		xpub := r.PathValue("xpub")
		if xpub == "" {
			return nil, &api.Error{Msg: "Missing xpub"}
		}
		if p.caps.Accounts == nil {
			return nil, p.caps.NotSupported(api.CapAccounts)
		}
		return p.caps.Accounts.Account(r.Context(), xpub, api.ParseAddressQuery(r.URL.Query()))
	})
	p.handle("GET /api/v2/utxo/{address...}", "utxo", func(r *http.Request) (any, error) {
		if p.caps.Utxos == nil {
			return nil, p.caps.NotSupported(api.CapUtxos)
		}
		q := r.URL.Query()
		if api.ParseBool(q.Get("runes")) {
			if p.caps.Runes == nil {
				return nil, p.caps.NotSupported(api.CapRunes)
			}
			us, err := p.caps.Runes.UtxosWithRunes(r.Context(), r.PathValue("address"), q.Get("confirmed") == "true", api.ParseInt(q.Get("gap")))
			return api.UtxoList(us), err
		}
		us, err := p.caps.Utxos.Utxos(r.Context(), r.PathValue("address"), q.Get("confirmed") == "true", api.ParseInt(q.Get("gap")))
		return api.UtxoList(us), err // encodes itself: writeJSON
	})
	p.handle("GET /api/v2/estimatefee/{blocks}", "estimatefee", func(r *http.Request) (any, error) {
		n, err := api.ParseFeeBlocks(r.PathValue("blocks"))
		if err != nil {
			return nil, err
		}
		if p.caps.FeeEstimates == nil {
			return nil, p.caps.NotSupported(api.CapFeeEstimates)
		}
		return p.caps.FeeEstimates.EstimateFee(r.Context(), n, r.URL.Query().Get("conservative") != "false")
	})
	p.handle("GET /api/v2/contract/{contract}", "contract", func(r *http.Request) (any, error) {
		if p.caps.Contracts == nil {
			return nil, p.caps.NotSupported(api.CapContracts)
		}
		q := r.URL.Query()
		return p.caps.Contracts.Contract(r.Context(), r.PathValue("contract"),
			api.ContractQuery{Currency: strings.ToLower(q.Get("currency")), Protocols: api.ParseProtocols(q["protocols"])})
	})
	p.handle("GET /api/v2/feestats/{id}", "feestats", func(r *http.Request) (any, error) {
		if p.caps.FeeStats == nil {
			return nil, p.caps.NotSupported(api.CapFeeStats)
		}
		return p.caps.FeeStats.FeeStats(r.Context(), r.PathValue("id"))
	})
	p.handle("GET /api/v2/block-filters/", "block-filters", p.blockFilters)
	p.handle("POST /api/v2/pushdata/search", "pushdata-search", p.pushdataSearch)
	p.runeRoutes()
	p.handle("GET /api/v2/sp-tweaks/{height}", "sp-tweaks", p.spTweaks)
}

// spTweaks serves /api/v2/sp-tweaks/<height>: a block's Silent Payments
// tweak page.
func (p *Public) spTweaks(r *http.Request) (any, error) {
	if p.caps.Tweaks == nil {
		return nil, p.caps.NotSupported(api.CapTweaks)
	}
	q := r.URL.Query()
	filterSpent, dust, err := api.ParseTweakFilters(q.Get("filterSpent"), q.Get("dustLimit"))
	if err != nil {
		return nil, err
	}
	return p.caps.Tweaks.SilentPaymentTweaks(r.Context(), r.PathValue("height"), filterSpent, dust)
}

// blockFilters serves /api/v2/block-filters/ (and, like Blockbook's
// subtree route, any path below it): the parameters are all in the query.
func (p *Public) blockFilters(r *http.Request) (any, error) {
	if p.caps.BlockFilters == nil {
		return nil, p.caps.NotSupported(api.CapBlockFilters)
	}
	q := r.URL.Query()
	return p.caps.BlockFilters.BlockFilters(r.Context(), q.Get("scriptType"), q.Get("lastN"), q.Get("from"), q.Get("to"))
}

// runeRoutes are the Runes index's own routes (db/optional/runes).
func (p *Public) runeRoutes() {
	p.handle("GET /api/v2/rune/{rune}", "rune", func(r *http.Request) (any, error) {
		if p.caps.Runes == nil {
			return nil, p.caps.NotSupported(api.CapRunes)
		}
		return p.caps.Runes.Rune(r.Context(), r.PathValue("rune"))
	})
	p.handle("GET /api/v2/rune-history/{address}", "rune-history", func(r *http.Request) (any, error) {
		if p.caps.Runes == nil {
			return nil, p.caps.NotSupported(api.CapRunes)
		}
		return p.caps.Runes.RuneHistory(r.Context(), r.PathValue("address"), api.ParseAddressQuery(r.URL.Query()))
	})
}
