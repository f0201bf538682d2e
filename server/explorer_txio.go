package server

import (
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"strconv"

	"github.com/openexplorer/blockbook/api"
)

// The tx page lists a tx's inputs and outputs txIOShown at a time, so its
// HTML stays bounded for any tx (a 1,000-input tx listed whole was 467 KB):
// ?inputs=N and ?outputs=N show the window of each side holding index N,
// and plain links (no script) step through the windows. Links to one
// input or output from elsewhere (a prevout, a spending input,
// /spending/) name its window when it is not the first.

// txIOShown is how many inputs, and outputs, a tx page lists at a time.
const txIOShown = 50

// txHexShown bounds the raw hex a tx page prints (?hex=1, the view
// without script): a 1,000-input tx's would be some 300 KB. A longer one is
// linked at the API's rawtx route instead (which the script reads anyway).
const txHexShown = 100_000

// ioWindow is the part of one side of a tx that a page lists, [From, To)
// of Total, and the links to the other windows ("" where there is none).
type ioWindow struct {
	What                    string // "inputs" or "outputs"
	From, To, Total         int
	First, Prev, Next, Last string
	path                    string     // the page's, escaped
	query                   url.Values // the page's parameters, as asked
}

// Paged reports whether the side has more than one window.
func (w ioWindow) Paged() bool { return w.Total > txIOShown }

// txWindows reads the inputs and outputs parameters of a tx page request
// and cuts tx's lists to their windows; a bad parameter is a 400.
func txWindows(r *http.Request, tx *api.Tx) (vin []api.Vin, vout []api.Vout, ins, outs ioWindow, err error) {
	q := r.URL.Query()
	if ins, err = newIOWindow(r, q, "inputs", len(tx.Vin)); err != nil {
		return nil, nil, ins, outs, err
	}
	if outs, err = newIOWindow(r, q, "outputs", len(tx.Vout)); err != nil {
		return nil, nil, ins, outs, err
	}
	return tx.Vin[ins.From:ins.To], tx.Vout[outs.From:outs.To], ins, outs, nil
}

// newIOWindow is the window of total items named by query parameter key
// (an index; the first window without it).
func newIOWindow(r *http.Request, q url.Values, key string, total int) (ioWindow, error) {
	w := ioWindow{What: key, Total: total, path: r.URL.EscapedPath(), query: q}
	if s := q.Get(key); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return w, &api.Error{Msg: "Invalid " + key + " parameter '" + truncate(s, 20) + "': give the index of one, from 0"}
		}
		if n >= total {
			return w, &api.Error{Msg: "The transaction has " + strconv.Itoa(total) + " " + key + "; there is no " + strconv.Itoa(n)}
		}
		w.From = n - n%txIOShown
	}
	w.To = min(w.From+txIOShown, total)
	if !w.Paged() {
		return w, nil
	}
	link := func(from int) string { return w.windowHref(from, from) }
	last := (total - 1) / txIOShown * txIOShown
	if w.From > 0 {
		w.First, w.Prev = link(0), link(w.From-txIOShown)
	}
	if w.From < last {
		w.Next, w.Last = link(w.From+txIOShown), link(last)
	}
	return w, nil
}

// anchor is the fragment naming item n of the window's side.
func (w ioWindow) anchor(n int) string {
	if w.What == "outputs" {
		return "#output-" + strconv.Itoa(n)
	}
	return "#input-" + strconv.Itoa(n)
}

// windowHref links item n of the page listing the window from `from`,
// keeping the page's other parameters (the other side's window, hex).
func (w ioWindow) windowHref(from, n int) string {
	v := maps.Clone(w.query) // the page's stay as asked
	if from == 0 {
		v.Del(w.What)
	} else {
		v.Set(w.What, strconv.Itoa(from))
	}
	href := w.path
	if len(v) > 0 {
		href += "?" + v.Encode()
	}
	return href + w.anchor(n)
}

// href links item n of the window's side from the page: in the page when
// the window holds it, else the page listing its window.
func (w ioWindow) href(n int) string {
	if n >= w.From && n < w.To {
		return w.anchor(n)
	}
	return w.windowHref(n-n%txIOShown, n)
}

// ioHref links input or output n of tx txid: the plain page in the first
// window (the link every page had before windows), else the window's own
// link (the one its neighbours' next and previous links name).
func ioHref(side, txid string, n int) string {
	base, frag := "/tx/"+url.PathEscape(txid), "#"+side+"-"+strconv.Itoa(n)
	if n < txIOShown {
		return base + frag
	}
	return base + "?" + side + "s=" + strconv.Itoa(n-n%txIOShown) + frag
}

// OutputHref links output n of the page's tx from its runestone card: in
// the page when the window listed holds it, else in its window, keeping
// the page's other parameters.
func (p txPage) OutputHref(n uint32) string { return p.Outs.href(int(n)) }

// hexHref is the raw-hex toggle's link: the page with the hex shown
// (?hex=1) or hidden, keeping the other parameters (the windows).
func hexHref(r *http.Request, txid string, show bool) string {
	v := r.URL.Query()
	v.Del("hex")
	if show {
		v.Set("hex", "1")
	}
	href := "/tx/" + url.PathEscape(txid)
	if len(v) > 0 {
		href += "?" + v.Encode()
	}
	if show {
		href += "#rawhex"
	}
	return href
}

// txIOFuncs are the template functions of this file.
var txIOFuncs = template.FuncMap{
	"ioHref": func(side, txid string, n any) string {
		switch v := n.(type) {
		case uint32:
			return ioHref(side, txid, int(v))
		case int:
			return ioHref(side, txid, v)
		}
		panic(fmt.Sprintf("ioHref: index %v of type %T", n, n))
	},
}
