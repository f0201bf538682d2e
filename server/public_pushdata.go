package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/openexplorer/blockbook/api"
)

// maxPushdataBody bounds a search's body: 1,000 hashes of 64 digits with
// quotes, commas and some whitespace.
const maxPushdataBody = 128 << 10

// pushdataSearch serves POST /api/v2/pushdata/search, {"hashes": [...]}.
func (p *Public) pushdataSearch(r *http.Request) (any, error) {
	if p.caps.Pushdata == nil {
		return nil, p.caps.NotSupported(api.CapPushdata)
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxPushdataBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &api.Error{Msg: "Request body too large"}
	}
	if err != nil {
		return nil, &api.Error{Msg: "Cannot read request body", Err: err}
	}
	var req struct {
		Hashes []string `json:"hashes"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &api.Error{Msg: `Invalid request body: want {"hashes": ["<sha256 hex>", ...]}`, Err: err}
	}
	return p.caps.Pushdata.PushdataSearch(r.Context(), req.Hashes)
}
