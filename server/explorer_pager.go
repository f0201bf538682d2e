package server

import (
	"net/http"
	"strconv"
)

// pager is the paging navigation of a list.
type pager struct {
	Label                   string // the nav's accessible name
	Page                    int
	Total                   int // pages; 0 when unknown
	First, Prev, Next, Last string
	Nums                    []pageNum // a few pages around this one
}

type pageNum struct {
	Page    int
	Href    string
	Current bool
}

// newPager returns the links to the other pages of r's list, or nil when it
// has a single page. total < 0 means unknown; more then tells whether a
// next page may exist.
func newPager(r *http.Request, page, total int, more bool) *pager {
	if total >= 0 && total <= 1 && page <= 1 {
		return nil
	}
	href := func(n int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		return r.URL.EscapedPath() + "?" + q.Encode()
	}
	p := &pager{Label: "Pages", Page: page, Total: max(total, 0)}
	if page > 1 {
		p.First, p.Prev = href(1), href(page-1)
	}
	if total >= 0 && page < total || total < 0 && more {
		p.Next = href(page + 1)
	}
	if total > 0 && page < total {
		p.Last = href(total)
	}
	last := page + 2
	if total >= 0 {
		last = min(last, total)
	}
	for n := max(1, page-2); n <= last; n++ {
		p.Nums = append(p.Nums, pageNum{Page: n, Href: href(n), Current: n == page})
	}
	return p
}

// pageParam reads the page query parameter (the api clamps it).
func pageParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil {
		return 1
	}
	return n
}
