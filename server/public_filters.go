package server

import (
	"net/http"

	"github.com/openexplorer/blockbook/api"
)

// blockFilters serves /api/v2/block-filters/ (and, like Blockbook's
// subtree route, any path below it): the parameters are all in the query.
func (p *Public) blockFilters(r *http.Request) (any, error) {
	if p.caps.BlockFilters == nil {
		return nil, p.caps.NotSupported(api.CapBlockFilters)
	}
	q := r.URL.Query()
	return p.caps.BlockFilters.BlockFilters(r.Context(), q.Get("scriptType"), q.Get("lastN"), q.Get("from"), q.Get("to"))
}
