package server

// Blockbook's token metadata routes of /admin (Ethereum-type chains):
// /admin/contract-info (a page saying how to use the JSON routes),
// /admin/contract-info/ (list, get, update, delete of the contract
// records, kept as operators' fixes in the index) and
// /admin/internal-data-errors (the blocks whose trace failed, and a
// request to trace them again: a page, as Blockbook's, or JSON on request).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// ContractAdmin is the contract metadata the admin reads and fixes
// (api.ContractAdmin).
type ContractAdmin interface {
	List(from string, limit int) ([]api.AdminContractInfo, string, error)
	Get(ctx context.Context, address string) (*api.AdminContractInfo, error)
	Update(infos []api.AdminContractInfo) (int, error)
	Delete(address string) (contract string, purged *api.AdminContractInfo, err error)
	InternalDataErrors() ([]api.InternalDataError, error)
}

// TraceRetrier traces again the blocks whose trace failed: Request asks
// the sync worker to do it at once (it also does after each pass), Pending
// tells whether a request is not done yet.
type TraceRetrier interface {
	Request()
	Pending() bool
}

// Blockbook's page sizes of the contract list.
const (
	contractListDefault = 1000
	contractListMax     = 10000
)

// maxContractBody bounds a POSTed contract list: ten thousand records of
// the longest names fit.
const maxContractBody = 8 << 20

type contractListAnswer struct {
	Contracts []api.AdminContractInfo `json:"contracts"`
	Next      string                  `json:"next,omitempty"`
}

type contractDeleteAnswer struct {
	Contract string                 `json:"contract"`
	Deleted  bool                   `json:"deleted"`
	Purged   *api.AdminContractInfo `json:"purged,omitempty"`
}

type internalDataErrorsAnswer struct {
	Count      int                     `json:"count"`
	Refetching bool                    `json:"refetching"`
	Errors     []api.InternalDataError `json:"internalDataErrors"`
}

// registerContracts adds the routes when the chain has contracts.
func (a *admin) registerContracts(mux *http.ServeMux) []string {
	if a.cfg.Contracts == nil {
		return nil
	}
	mux.Handle("/admin/contract-info", a.guard(http.HandlerFunc(a.contractPage)))
	mux.Handle("/admin/contract-info/", a.guard(http.HandlerFunc(a.contractInfo)))
	mux.Handle("/admin/internal-data-errors", a.guard(http.HandlerFunc(a.internalDataErrors)))
	return []string{"/admin/contract-info", "/admin/contract-info/", "/admin/internal-data-errors"}
}

// adminError answers an error: the caller's (api.Error) 400, an
// unreachable node 503, ours 500 without details.
func (a *admin) adminError(w http.ResponseWriter, r *http.Request, err error) {
	if ue, ok := api.AsUserError(err); ok {
		writeJSON(w, http.StatusBadRequest, errorBody{ue.Msg})
		return
	}
	if msg, _, ok := unavailable(err); ok {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{msg})
		return
	}
	a.log().Error("admin request failed", "path", r.URL.Path, "err", err)
	writeJSON(w, http.StatusInternalServerError, errorBody{"Internal server error"})
}

func (a *admin) log() *slog.Logger {
	if a.cfg.Log != nil {
		return a.cfg.Log
	}
	return slog.Default()
}

// contractInfo serves GET (the list on the bare path, one contract below
// it), POST/PUT of a JSON array on the bare path and DELETE of one contract.
func (a *admin) contractInfo(w http.ResponseWriter, r *http.Request) {
	address := strings.TrimSpace(strings.Trim(strings.TrimPrefix(r.URL.Path, "/admin/contract-info/"), "/"))
	switch r.Method {
	case http.MethodGet:
		if address == "" {
			a.listContracts(w, r)
			return
		}
		ci, err := a.cfg.Contracts.Get(r.Context(), address)
		if err != nil {
			a.adminError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, ci)
	case http.MethodPost, http.MethodPut:
		if address != "" {
			writeJSON(w, http.StatusBadRequest, errorBody{"POST updates the collection: send a JSON array of contracts to /admin/contract-info/"})
			return
		}
		a.updateContracts(w, r)
	case http.MethodDelete:
		contract, purged, err := a.cfg.Contracts.Delete(address)
		if err != nil {
			a.adminError(w, r, err)
			return
		}
		if purged != nil {
			a.log().Info("admin: contract metadata fix removed", "contract", contract, "purged", fmt.Sprintf("%+v", *purged), "client", r.RemoteAddr)
		}
		writeJSON(w, http.StatusOK, contractDeleteAnswer{Contract: contract, Deleted: purged != nil, Purged: purged})
	default:
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Unsupported method " + r.Method})
	}
}

func (a *admin) listContracts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := contractListDefault
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > contractListMax {
			writeJSON(w, http.StatusBadRequest, errorBody{"Invalid limit, expecting a number in 1.." + strconv.Itoa(contractListMax)})
			return
		}
		limit = n
	}
	list, next, err := a.cfg.Contracts.List(strings.TrimSpace(q.Get("from")), limit)
	if err != nil {
		a.adminError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, contractListAnswer{Contracts: list, Next: next})
}

func (a *admin) updateContracts(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxContractBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusBadRequest, errorBody{fmt.Sprintf("Request body over %d bytes", maxContractBody)})
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errorBody{"Cannot get request body"})
		return
	}
	var infos []api.AdminContractInfo
	if err := json.Unmarshal(data, &infos); err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{"Cannot unmarshal body to array of ContractInfo objects: " + err.Error()})
		return
	}
	n, err := a.cfg.Contracts.Update(infos)
	if err != nil {
		a.adminError(w, r, err)
		return
	}
	for i := range infos {
		a.log().Info("admin: contract metadata fixed", "contract", infos[i].Contract, "name", infos[i].Name, "symbol", infos[i].Symbol, "decimals", infos[i].Decimals, "client", r.RemoteAddr)
	}
	writeJSON(w, http.StatusOK, map[string]int{"updated": n})
}

// internalDataErrors lists the blocks whose trace failed; POST first asks
// for them to be traced again.
func (a *admin) internalDataErrors(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		if a.cfg.Traces != nil {
			a.cfg.Traces.Request()
		}
	default:
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Unsupported method " + r.Method})
		return
	}
	errs, err := a.cfg.Contracts.InternalDataErrors()
	if err != nil {
		a.adminError(w, r, err)
		return
	}
	out := internalDataErrorsAnswer{Count: len(errs), Errors: errs}
	if a.cfg.Traces != nil {
		out.Refetching = a.cfg.Traces.Pending()
	}
	if !wantsJSON(r) {
		// Blockbook serves this route as a page for the operator's
		// browser, its retry button a form POST to the same path.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = internalErrorsPage.Execute(w, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// wantsJSON tells whether the client asked for JSON (our scripts and
// monitoring) rather than the page Blockbook serves.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// The admin pages link relatively: the internal server may sit under a
// path prefix (-internal's [address]:port/path).
var internalErrorsPage = template.Must(template.New("internalErrors").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Internal data errors</title></head>
<body>
<h1>Blocks with errors from fetching internal data</h1>
<p>Count: {{.Count}}</p>
{{if .Refetching}}<p>Fetching...</p>{{else}}<form method="post" action=""><button type="submit">Retry fetch</button></form>{{end}}
<table>
<thead><tr><th>Height</th><th>Hash</th><th>Error Message</th></tr></thead>
<tbody>
{{range .Errors}}<tr><td>{{.Height}}</td><td>{{.Hash}}</td><td>{{.ErrorMessage}}</td></tr>
{{end}}</tbody>
</table>
<p>The same as JSON: this path with <code>Accept: application/json</code>.</p>
</body></html>
`))

var contractPage = template.Must(template.New("contracts").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Contract metadata</title></head>
<body>
<h1>Contract metadata</h1>
<form method="get" onsubmit="location.href='contract-info/'+encodeURIComponent(this.address.value.trim());return false">
<label>Contract address <input name="address" size="44"></label> <button>Show</button>
</form>
<p>The JSON routes (HTTP Basic auth as this page):</p>
<ul>
<li><code>GET /admin/contract-info/?limit=1..{{.Max}}&amp;from=&lt;address&gt;</code>: a page of the stored records, <code>{"contracts":[...],"next":"&lt;address&gt;"}</code>; <code>next</code>, when there is more, is the <code>from</code> of the next page.</li>
<li><code>GET /admin/contract-info/&lt;address&gt;</code>: one contract.</li>
<li><code>POST /admin/contract-info/</code> with a JSON array of contracts: stores their name, symbol, decimals and standard as fixes that outlive reorgs and restarts; answers <code>{"updated":N}</code>.</li>
<li><code>DELETE /admin/contract-info/&lt;address&gt;</code>: removes a fix; the contract answers the metadata the node gave again.</li>
<li><a href="internal-data-errors">/admin/internal-data-errors</a>: blocks whose trace failed; <code>POST</code> traces them again.</li>
</ul>
</body></html>
`))

func (a *admin) contractPage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Method not allowed"})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = contractPage.Execute(w, struct{ Max int }{contractListMax})
}
