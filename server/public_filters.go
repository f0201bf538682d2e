package server

import "net/http"

// blockFilters serves /api/v2/block-filters/ (and, like Blockbook's
// subtree route, any path below it): the parameters are all in the query.
func (p *Public) blockFilters(r *http.Request) (any, error) {
	q := r.URL.Query()
	return p.svc.BlockFilters(r.Context(), q.Get("scriptType"), q.Get("lastN"), q.Get("from"), q.Get("to"))
}
