package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// The legacy routes, registered as Blockbook 0.6.0 registers them:
//   - /api/v1/<x>/ on Bitcoin-type chains only (Ethereum-type chains never
//     had v1: there these paths fall to the catch-all, as in Blockbook);
//   - the unversioned /api/<x>/, v1 shapes on Bitcoin-type chains and v2
//     shapes on Ethereum-type ones.
//
// Where v1 and v2 answer alike (Blockbook uses one handler for both and
// ignores the version), the request is served by the v2 route itself, so
// the two can never drift apart. Where v1 has its own shapes (tx, address,
// account, utxo, block), the v2 answer is converted by api.V1.

// v1SameAsV2 are the v1 routes whose answers are v2's.
var v1SameAsV2 = []string{"block-index", "tx-specific", "sendtx", "estimatefee"}

// unversionedSameAsV2 are the unversioned routes whose answers are v2's
// on every chain type (rawtx, contract: Ethereum-type answers; Bitcoin-type
// chains answer what their v2 route answers, see docs/api.md).
var unversionedSameAsV2 = []string{"block-index", "block-filters", "tx-specific", "rawtx", "contract", "rawblock",
	"sendtx", "estimatefee", "balancehistory"}

// unversionedConverted are the unversioned routes that answer v1 shapes on
// Bitcoin-type chains (and v2's on Ethereum-type ones).
var unversionedConverted = []string{"tx", "address", "xpub", "utxo", "block"}

// legacyRoutes registers /api/v1/ and the unversioned /api/ paths. Their
// patterns are more specific than the /api/ catch-all, so they win over it.
func (p *Public) legacyRoutes() {
	if p.caps.Chain == bchain.ChainEthereumType {
		p.sameAsV2("/api/", slices.Concat(unversionedSameAsV2, unversionedConverted))
		return
	}
	p.sameAsV2("/api/v1/", v1SameAsV2)
	p.sameAsV2("/api/", unversionedSameAsV2)
	v := &v1Routes{p: p}
	for _, prefix := range []string{"/api/v1/", "/api/"} {
		p.handle("GET "+prefix+"tx/{txid...}", "tx-v1", v.tx)
		p.handle("GET "+prefix+"address/{address...}", "address-v1", v.address)
		p.handle("GET "+prefix+"utxo/{address...}", "utxo-v1", v.utxo)
		p.handle("GET "+prefix+"block/{id...}", "block-v1", v.block)
	}
	p.handle("GET /api/xpub/{xpub...}", "xpub-v1", v.xpub)
}

// sameAsV2 serves prefix+name/... by the v2 route of the same name, and
// answers a missing id as Blockbook does.
func (p *Public) sameAsV2(prefix string, names []string) {
	for _, name := range names {
		p.mux.HandleFunc(prefix+name+"/", p.asV2(prefix))
		if h := p.missingID(name); h != nil {
			p.handle("GET "+prefix+name+"/{$}", name, h)
		}
	}
	p.mux.HandleFunc("POST "+prefix+"sendtx", p.asV2(prefix))
}

// missingID answers name/ without its id: Blockbook's texts, and for
// block-index the best block (Blockbook reads a missing height as the tip).
func (p *Public) missingID(name string) func(*http.Request) (any, error) {
	msg := map[string]string{
		"tx": "Missing txid", "tx-specific": "Missing txid", "rawtx": "Missing txid", "address": "Missing address", "contract": "Missing contract",
		"sendtx": "Missing tx blob", "estimatefee": "Missing parameter 'number of blocks'",
	}[name]
	switch {
	case name == "block-index":
		return func(r *http.Request) (any, error) {
			info, err := p.svc.Info(r.Context())
			if err != nil {
				return nil, fmt.Errorf("best block: %w", err)
			}
			return &api.BlockIndex{BlockHash: info.BestHash}, nil
		}
	case msg != "":
		return func(*http.Request) (any, error) { return nil, &api.Error{Msg: msg} }
	}
	return nil
}

// asV2 serves a request by the v2 route of the same name: the path after
// prefix is moved under /api/v2/ and the request dispatched again. A path
// no v2 route takes goes to the handler that takes the rewritten one (the
// catch-all) as it came, so its answer names the path the client asked.
func (p *Public) asV2(prefix string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/api/v2/" + strings.TrimPrefix(r.URL.Path, prefix)
		if r.URL.RawPath != "" {
			r2.URL.RawPath = "/api/v2/" + strings.TrimPrefix(r.URL.RawPath, prefix)
		}
		h, pattern := p.mux.Handler(r2)
		if !strings.Contains(pattern, "/api/v2/") {
			h.ServeHTTP(w, r)
			return
		}
		p.mux.ServeHTTP(w, r2)
	}
}

// v1Routes answers the v1 shapes of Bitcoin-type chains.
type v1Routes struct {
	p *Public

	mu  sync.Mutex
	cnv *api.V1 // set once the coin's decimals are known
}

// conv returns the converter, asking the service for the coin's decimals
// until it answers once (they never change).
func (v *v1Routes) conv(ctx context.Context) (api.V1, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cnv != nil {
		return *v.cnv, nil
	}
	info, err := v.p.svc.Info(ctx)
	if err != nil {
		return api.V1{}, fmt.Errorf("coin decimals for v1: %w", err)
	}
	v.cnv = &api.V1{Decimals: info.Decimals}
	return *v.cnv, nil
}

// boolParam checks an optional boolean parameter as Blockbook does, with
// its error text.
func boolParam(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, &api.Error{Msg: "Parameter '" + name + "' cannot be converted to boolean", Err: err}
	}
	return b, nil
}

// converted answers the v1 shape of a v2 answer (or its error), converted
// with the coin's decimals.
func converted[T, U any](v *v1Routes, r *http.Request, v2 T, err error, to func(api.V1, T) U) (any, error) {
	if err != nil {
		return nil, err
	}
	c, err := v.conv(r.Context())
	if err != nil {
		return nil, err
	}
	return to(c, v2), nil
}

func (v *v1Routes) tx(r *http.Request) (any, error) {
	txid := r.PathValue("txid")
	if txid == "" {
		return nil, &api.Error{Msg: "Missing txid"}
	}
	// spending is accepted and checked; spent outputs always carry their
	// spending tx here (the index keeps it).
	if _, err := boolParam(r, "spending"); err != nil {
		return nil, err
	}
	tx, err := v.p.svc.Tx(r.Context(), txid)
	return converted(v, r, tx, err, api.V1.Tx)
}

func (v *v1Routes) address(r *http.Request) (any, error) {
	address := r.PathValue("address")
	if address == "" {
		return nil, &api.Error{Msg: "Missing address"}
	}
	a, err := v.p.svc.Address(r.Context(), address, api.ParseAddressQuery(r.URL.Query()))
	return converted(v, r, a, err, api.V1.Address)
}

func (v *v1Routes) xpub(r *http.Request) (any, error) {
	xpub := r.PathValue("xpub")
	if xpub == "" {
		return nil, &api.Error{Msg: "Missing xpub"}
	}
	if v.p.caps.Accounts == nil {
		return nil, v.p.caps.NotSupported(api.CapAccounts)
	}
	a, err := v.p.caps.Accounts.Account(r.Context(), xpub, api.ParseAddressQuery(r.URL.Query()))
	return converted(v, r, a, err, api.V1.Address)
}

func (v *v1Routes) utxo(r *http.Request) (any, error) {
	confirmed, err := boolParam(r, "confirmed")
	if err != nil {
		return nil, err
	}
	if v.p.caps.Utxos == nil {
		return nil, v.p.caps.NotSupported(api.CapUtxos)
	}
	us, err := v.p.caps.Utxos.Utxos(r.Context(), r.PathValue("address"), confirmed, api.ParseInt(r.URL.Query().Get("gap")))
	return converted(v, r, us, err, api.V1.Utxos)
}

func (v *v1Routes) block(r *http.Request) (any, error) {
	b, err := v.p.svc.Block(r.Context(), r.PathValue("id"), api.ParseInt(r.URL.Query().Get("page")), 0)
	return converted(v, r, b, err, api.V1.Block)
}
