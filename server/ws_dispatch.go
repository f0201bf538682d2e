package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/openexplorer/blockbook/api"
)

// wsRequest is one parsed request frame.
type wsRequest struct {
	ID     string
	Method string
	Params json.RawMessage
}

// wsHandler answers one method. Returned errors are mapped to the wire by
// wsErrorMessage.
type wsHandler func(ctx context.Context, c *wsConn, req *wsRequest) (any, error)

// parseRequest decodes {id, method, params}. It returns what it could read
// of the id even when the rest is wrong, so that the error answer carries it.
func parseRequest(data []byte) (wsRequest, error) {
	var raw struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return wsRequest{}, fmt.Errorf("Invalid request, not a JSON object: %v", shortJSONError(err))
	}
	var req wsRequest
	switch {
	case len(raw.ID) == 0 || bytes.Equal(raw.ID, []byte("null")):
	case raw.ID[0] == '"':
		if err := json.Unmarshal(raw.ID, &req.ID); err != nil {
			return req, errors.New("Invalid request, id must be a string")
		}
	default:
		// A number: answer with its text, the best a client can match.
		req.ID = truncate(string(raw.ID), 64)
		if raw.ID[0] == '{' || raw.ID[0] == '[' {
			return req, errors.New("Invalid request, id must be a string")
		}
	}
	if err := json.Unmarshal(raw.Method, &req.Method); err != nil || req.Method == "" {
		return req, errors.New("Invalid request, method must be a non-empty string")
	}
	req.Params = raw.Params
	return req, nil
}

// decodeParams unmarshals a request's params into dst; absent or null
// params leave dst at its zero value. Type mismatches are user errors that
// name the field.
func decodeParams(raw json.RawMessage, dst any) error {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return &api.Error{Msg: fmt.Sprintf("Invalid params: expected %s, got %s", jsonKind(te.Type.Kind().String()), te.Value), Err: err}
			}
			return &api.Error{Msg: fmt.Sprintf("Invalid params: %s must be %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value), Err: err}
		}
		return &api.Error{Msg: "Invalid params: " + shortJSONError(err), Err: err}
	}
	return nil
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(k string) string {
	switch k {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}

func shortJSONError(err error) string { return truncate(err.Error(), 200) }

// dispatch runs a request in its own goroutine, within the connection's
// and the server's limits on requests in progress.
func (s *Websocket) dispatch(c *wsConn, data []byte) {
	req, err := parseRequest(data)
	if err != nil {
		s.m.requests.WithLabelValues("invalid", "error").Inc()
		c.send(errorResponse(req.ID, err.Error()))
		return
	}
	h, ok := wsMethods[req.Method]
	if !ok {
		s.m.requests.WithLabelValues("unknown", "error").Inc()
		c.send(errorResponse(req.ID, fmt.Sprintf("Unknown method %q", truncate(req.Method, 64))))
		return
	}
	if c.accountInfoLimited(&req) {
		s.m.requests.WithLabelValues(req.Method, "limited").Inc()
		c.send(errorResponse(req.ID, fmt.Sprintf("Too many accounts on this connection (limit %d)", s.cfg.GetAccountInfoLimit)))
		return
	}
	cost := c.takePending(&req)
	if cost == 0 {
		s.m.requests.WithLabelValues(req.Method, "limited").Inc()
		c.send(errorResponse(req.ID, pendingLimitMessage(&req, cap(c.pending))))
		return
	}
	select {
	case s.active <- struct{}{}:
	default:
		c.releasePending(cost)
		s.m.requests.WithLabelValues(req.Method, "limited").Inc()
		c.send(errorResponse(req.ID, "Server busy, retry later"))
		return
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.active
		c.releasePending(cost)
		return
	}
	s.requests.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.requests.Done()
		defer func() { <-s.active; c.releasePending(cost) }()
		if cost > 1 && s.cfg.Gate != nil {
			// The answer is queued, not written, so the place is held
			// only while the handler works.
			release, ok := s.cfg.Gate.Enter(c.ctx, "websocket")
			if !ok {
				s.m.requests.WithLabelValues(req.Method, "limited").Inc()
				c.send(errorResponse(req.ID, "Server busy, retry later"))
				return
			}
			defer release()
		}
		s.handle(c, &req, h)
	}()
}

// handle runs one handler and queues its answer.
func (s *Websocket) handle(c *wsConn, req *wsRequest, h wsHandler) {
	start := time.Now()
	status := "ok"
	var msg []byte
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in websocket handler", "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			status, msg = "error", errorResponse(req.ID, "Internal error")
		}
		s.m.requests.WithLabelValues(req.Method, status).Inc()
		s.m.latency.WithLabelValues(req.Method).Observe(time.Since(start).Seconds())
		if msg != nil {
			c.send(msg)
		}
	}()
	ctx, cancel := context.WithTimeout(c.ctx, s.cfg.RequestTimeout)
	defer cancel()
	data, err := h(ctx, c, req)
	if err == nil {
		if msg, err = response(req.ID, data); err == nil {
			return
		}
	}
	status = "error"
	msg = errorResponse(req.ID, s.wsErrorMessage(req.Method, err))
}

// wsErrorMessage is where websocket errors become messages: user mistakes
// verbatim, an unreachable node and a timeout as such, anything else
// without details.
func (s *Websocket) wsErrorMessage(method string, err error) string {
	if ue, ok := api.AsUserError(err); ok {
		return ue.Msg
	}
	if msg, logMsg, ok := unavailable(err); ok {
		s.log.Warn(logMsg, "method", method, "err", err)
		return msg
	}
	if errors.Is(err, context.Canceled) {
		return "Request cancelled"
	}
	s.log.Error("request failed", "method", method, "err", err)
	return "Internal error"
}

// response renders {id, data}.
func response(id string, data any) ([]byte, error) {
	return json.Marshal(struct {
		ID   string `json:"id"`
		Data any    `json:"data"`
	}{id, data})
}

// errorResponse renders {id, data:{error:{message}}}.
func errorResponse(id, message string) []byte {
	type wsError struct {
		Message string `json:"message"`
	}
	b, _ := response(id, struct {
		Error wsError `json:"error"`
	}{wsError{message}})
	return b
}
