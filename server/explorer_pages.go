package server

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// The explorer's page handlers: each asks api.Service and hands the answer
// to its template; errors go to errorPage.

type indexPage struct {
	Status *api.SystemInfo
	Blocks blockList
	Fees   *feePanel
}

func (e *explorer) index(r *http.Request) (*result, error) {
	st, err := e.svc.Status(r.Context())
	if err != nil {
		return nil, err
	}
	blocks, err := e.svc.Blocks(r.Context(), 1, explorerIndexBlocks)
	if err != nil {
		return nil, err
	}
	fees, err := e.feePanel(r.Context())
	if err != nil {
		return nil, err
	}
	return &result{tmpl: "index", title: "Status", page: indexPage{Status: st, Blocks: e.blockList(r.Context(), blocks), Fees: fees}}, nil
}

func (e *explorer) blocks(r *http.Request) (*result, error) {
	b, err := e.svc.Blocks(r.Context(), pageParam(r), explorerBlocksPerPage)
	if err != nil {
		return nil, err
	}
	return &result{tmpl: "blocks", title: "Blocks", page: e.blockList(r.Context(), b), pager: newPager(r, b.Page, b.TotalPages, false)}, nil
}

func (e *explorer) block(r *http.Request) (*result, error) {
	b, err := e.svc.Block(r.Context(), r.PathValue("id"), pageParam(r), explorerTxsPerPage)
	if err != nil {
		return nil, err
	}
	page := blockPage{Block: b, Fees: e.blockFeeDist(r.Context(), b.Height)}
	return &result{tmpl: "block", title: "Block " + groupDigits(int64(b.Height)), page: page,
		pager: newPager(r, b.Page, b.TotalPages, false)}, nil
}

// blockPage is a block with its fee-rate distribution (Bitcoin-type).
type blockPage struct {
	*api.Block
	Fees *feeDist
}

type txPage struct {
	Tx       *api.Tx
	ShowHex  bool
	Flow     *flowPlot
	FeePlace string // where the fee rate stands in its block or the mempool

	Runestone *api.RunestoneInfo // with the Runes index on (explorer_runes.go)

	// The inputs and outputs listed, a window of each (explorer_txio.go).
	Vin       []api.Vin
	Vout      []api.Vout
	Ins, Outs ioWindow
	// HexTooLong: ?hex=1 asked for more than txHexShown characters.
	HexTooLong bool
	HexHref    string // the raw-hex toggle's link (explorer_txio.go)
}

func (e *explorer) tx(r *http.Request) (*result, error) {
	tx, stone, err := e.txWithRunes(r.Context(), r.PathValue("txid"))
	if err != nil {
		return nil, err
	}
	page := txPage{Tx: tx, Runestone: stone, ShowHex: r.URL.Query().Get("hex") == "1", Flow: newFlow(tx, e.loadedCoin()), FeePlace: e.feePlace(r.Context(), tx)}
	if page.Vin, page.Vout, page.Ins, page.Outs, err = txWindows(r, tx); err != nil {
		return nil, err
	}
	page.HexTooLong = page.ShowHex && len(tx.Hex) > txHexShown
	page.ShowHex = page.ShowHex && !page.HexTooLong
	page.HexHref = hexHref(r, tx.Txid, !page.ShowHex)
	return &result{tmpl: "tx", title: "Transaction " + shortHash(tx.Txid), page: page}, nil
}

// spending redirects to the tx spending an output (Blockbook's
// /spending/{txid}/{vout}).
func (e *explorer) spending(r *http.Request) (*result, error) {
	vout, err := strconv.ParseUint(r.PathValue("vout"), 10, 31)
	if err != nil {
		return nil, &api.Error{Msg: "Invalid output index '" + truncate(r.PathValue("vout"), 20) + "'"}
	}
	tx, err := e.svc.Tx(r.Context(), r.PathValue("txid"))
	if err != nil {
		return nil, err
	}
	switch {
	case int(vout) >= len(tx.Vout):
		return nil, &api.Error{Msg: "Transaction " + tx.Txid + " has no output " + strconv.Itoa(int(vout)), Err: api.ErrNotFound}
	case !tx.Vout[vout].Spent:
		return nil, &api.Error{Msg: "Output " + strconv.Itoa(int(vout)) + " of transaction " + tx.Txid + " is not spent by a confirmed transaction", Err: api.ErrNotFound}
	}
	o := tx.Vout[vout]
	return &result{redirect: ioHref("input", o.SpentTxID, o.SpentIndex)}, nil
}

// txSection is the tx list of an address or account page: pending txs,
// the page of confirmed ones, and the filter tabs.
type txSection struct {
	Pending   []*api.Tx
	Confirmed []*api.Tx
	Filters   []filterTab
	Filtered  bool
}

type filterTab struct {
	Label, Href string
	Current     bool
}

// addressFilters are the tabs selecting an address's txs by side.
var addressFilters = []struct{ value, label string }{
	{"", "All"}, {"inputs", "Sent (inputs)"}, {"outputs", "Received (outputs)"},
}

// newTxSection splits an answer's txs and builds the filter tabs, linking
// base with the query keep plus the filter.
func newTxSection(a *api.Address, base string, keep url.Values, filter string) txSection {
	sec := txSection{Filtered: filter != ""}
	for _, tx := range a.Transactions {
		if tx.BlockHeight < 0 {
			sec.Pending = append(sec.Pending, tx)
		} else {
			sec.Confirmed = append(sec.Confirmed, tx)
		}
	}
	if a.Nonce != "" {
		return sec // account-model chains: no inputs and outputs to filter by
	}
	for _, f := range addressFilters {
		q := url.Values{}
		for k, v := range keep {
			q[k] = v
		}
		if f.value != "" {
			q.Set("filter", f.value)
		}
		href := base
		if len(q) > 0 {
			href += "?" + q.Encode()
		}
		sec.Filters = append(sec.Filters, filterTab{Label: f.label, Href: href, Current: f.value == filter})
	}
	return sec
}

type addressPage struct {
	Addr    *api.Address
	Name    string      // the ENS name (explorer_nft.go)
	Token   *tokenFacts // a contract's token facts
	QR      *qrSVG
	History *balanceChart
	Utxos   *utxoBands
	txSection
}

func (e *explorer) address(r *http.Request) (*result, error) {
	filter := r.URL.Query().Get("filter")
	withRunes, err := e.withRunes(r.Context())
	if err != nil {
		return nil, err
	}
	a, err := e.svc.Address(r.Context(), r.PathValue("address"), api.AddressQuery{
		Page: pageParam(r), PageSize: explorerTxsPerPage, Details: api.DetailsTxsLight, Filter: api.ParseFilter(filter),
		Secondary: fiatCode(r), Runes: withRunes, ListRunes: withRunes,
	})
	if err != nil {
		return nil, err
	}
	base := "/address/" + url.PathEscape(a.Address)
	page := &addressPage{Addr: a, QR: newQR(a.Address), txSection: newTxSection(a, base, nil, filter),
		Name: e.ensName(r, a), Token: e.contractFacts(r.Context(), a.ContractInfo)}
	if page.History, err = e.chartOrNote(e.balanceHistory(r, a.Address, base, 0, a.Balance, a.Txs)); err != nil {
		return nil, err
	}
	if page.Utxos, err = e.utxoSummary(r, a.Address, 0, a.Txs); err != nil {
		return nil, err
	}
	return &result{tmpl: "address", title: "Address " + shortHash(a.Address), page: page,
		pager: newPager(r, a.Page, a.TotalPages, len(page.Confirmed) >= a.ItemsOnPage)}, nil
}

// search redirects to the block, tx, address or xpub a term names.
func (e *explorer) search(r *http.Request) (*result, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return &result{tmpl: "message", title: "Search", page: messagePage{Heading: "Search", Class: "info",
			Text: "Enter a block height or hash, a transaction id, an address or an xpub.", Search: true}}, nil
	}
	found, err := e.svc.Search(r.Context(), q)
	if _, ok := api.AsUserError(err); ok {
		if to, rerr := e.searchRune(r.Context(), q); rerr != nil || to != "" {
			return &result{redirect: to}, rerr
		}
	}
	if err != nil {
		return nil, err
	}
	return &result{redirect: searchTarget(q, found)}, nil
}

type sendTxPage struct {
	Hex, Txid, Error string
}

func (e *explorer) sendTxForm(*http.Request) (*result, error) {
	return &result{tmpl: "sendtx", title: "Send transaction", page: sendTxPage{}}, nil
}

// sendTx submits the form's hex to the node; the node's refusal is shown
// above the form, with the hex kept.
func (e *explorer) sendTx(r *http.Request) (*result, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, api.MaxTxHexLen+4096)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &api.Error{Msg: "The transaction is too large"}
		}
		return nil, &api.Error{Msg: "Cannot read the form", Err: err}
	}
	page := sendTxPage{Hex: strings.TrimSpace(r.PostForm.Get("hex"))}
	res := &result{tmpl: "sendtx", title: "Send transaction", page: &page}
	if page.Hex == "" {
		page.Error, res.status = "Paste a raw transaction in hex first.", http.StatusBadRequest
		return res, nil
	}
	sent, err := e.svc.SendTx(r.Context(), page.Hex)
	if ue, ok := api.AsUserError(err); ok {
		page.Error, res.status = ue.Msg, http.StatusBadRequest
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	page.Txid, page.Hex = sent.Result, ""
	return res, nil
}

func (e *explorer) mempool(r *http.Request) (*result, error) {
	m, err := e.svc.MempoolTxs(r.Context(), pageParam(r), explorerMempoolPerPage)
	if err != nil {
		return nil, err
	}
	return &result{tmpl: "mempool", title: "Mempool", page: m, pager: newPager(r, m.Page, m.TotalPages, false)}, nil
}
