package electrum

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Error codes: JSON-RPC's own, and the application codes Electrum servers
// use (clients show the message; some match on the code).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeBadRequest     = 1
	codeDaemonError    = 2
	codeExcessive      = -101 // a limit of the server was reached
	codeBusy           = -102 // not now: retry later
)

// rpcError is an error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

func newErr(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *rpcError {
	return newErr(codeBadRequest, format, args...)
}

func invalidParams(format string, args ...any) *rpcError {
	return newErr(codeInvalidParams, format, args...)
}

// asRPCError is the rpcError in err's chain, if any.
func asRPCError(err error) (*rpcError, bool) {
	var e *rpcError
	ok := errors.As(err, &e)
	return e, ok
}

// request is one JSON-RPC call (1.0 or 2.0).
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// isNotification: a 2.0 call without an id (or a 1.0 one with a null
// id) expects no answer.
func (r *request) isNotification() bool {
	return len(r.ID) == 0 || bytes.Equal(r.ID, []byte("null"))
}

// response is one answer. Result is already encoded, so that a null
// result (server.ping) is still written.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

// notification is a message the server sends unasked.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

var nullID = json.RawMessage("null")

// errorFrame encodes an error answer to id.
func errorFrame(id json.RawMessage, e *rpcError) []byte {
	if len(id) == 0 {
		id = nullID
	}
	b, err := json.Marshal(response{JSONRPC: "2.0", Error: e, ID: id})
	if err != nil { // cannot happen: every field encodes
		return []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error"},"id":null}`)
	}
	return b
}

// resultFrame encodes a result answer to id.
func resultFrame(id json.RawMessage, result any) ([]byte, error) {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return json.Marshal(response{JSONRPC: "2.0", Result: raw, ID: id})
}

// params are a call's arguments by position, whether the client sent an
// array or an object keyed by the documented names.
type params []json.RawMessage

// parseParams maps raw params onto names: positional arrays are taken as
// they are (at most len(names) unless extra is true), objects by name.
func parseParams(raw json.RawMessage, names []string, extra bool) (params, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		var p []json.RawMessage
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, invalidParams("invalid params: %v", err)
		}
		if len(p) > len(names) && !extra {
			return nil, invalidParams("too many params: %d given, at most %d", len(p), len(names))
		}
		return p, nil
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, invalidParams("invalid params: %v", err)
		}
		p := make(params, 0, len(names))
		for k := range m {
			if !contains(names, k) && !extra {
				return nil, invalidParams("unknown param %q", k)
			}
		}
		for i, n := range names {
			v, ok := m[n]
			if !ok {
				// Positions after a missing name are optional ones left out.
				for _, later := range names[i+1:] {
					if _, ok := m[later]; ok {
						return nil, invalidParams("param %q is missing", n)
					}
				}
				break
			}
			p = append(p, v)
		}
		return p, nil
	}
	return nil, invalidParams("params must be an array or an object")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// has reports whether param i was given (and is not null).
func (p params) has(i int) bool {
	return i < len(p) && !bytes.Equal(bytes.TrimSpace(p[i]), []byte("null"))
}

func (p params) str(i int, name string) (string, error) {
	if !p.has(i) {
		return "", invalidParams("%s is required", name)
	}
	var s string
	if err := json.Unmarshal(p[i], &s); err != nil {
		return "", invalidParams("%s must be a string", name)
	}
	return s, nil
}

// nonNegInt reads a non-negative integer below 2^31; def when absent.
func (p params) nonNegInt(i int, name string, def int, required bool) (int, error) {
	if !p.has(i) {
		if required {
			return 0, invalidParams("%s is required", name)
		}
		return def, nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(p[i]))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return 0, invalidParams("%s must be a non-negative integer", name)
	}
	v, err := n.Int64()
	if err != nil || v < 0 || v > 1<<31-1 {
		return 0, invalidParams("%s must be a non-negative integer", name)
	}
	return int(v), nil
}

func (p params) boolean(i int, name string) (bool, error) {
	if !p.has(i) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(p[i], &b); err != nil {
		return false, invalidParams("%s must be a boolean", name)
	}
	return b, nil
}
