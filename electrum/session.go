package electrum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// Per-session bounds: queued incoming messages (the reader then stops
// reading, which pushes back on the client), queued outgoing frames, and
// how long one write may take before the client counts as gone.
const (
	inQueue             = 4
	outQueue            = 256
	defaultWriteTimeout = 30 * time.Second
	callTimeout         = 60 * time.Second
)

// session is one client connection. Its worker goroutine handles the
// client's messages and its notifications one at a time, so an answer
// and a notification are never reordered; a reader and a writer
// goroutine move frames.
type session struct {
	s    *Server
	c    frameConn
	ip   string
	out  chan []byte
	done chan struct{}
	once sync.Once
	wake chan struct{}

	// Owned by the worker.
	version    string // negotiated; "" until server.version or the first call
	explicit   bool   // server.version was called
	subs       map[[32]byte]*subscription
	headers    bool
	lastHeader *headerNote

	// Set by the hub, taken by the worker.
	mu           sync.Mutex
	dirty        map[[32]byte][]byte // script hash: its script, if known
	dirtyAll     bool
	headersDirty bool
}

// subscription is a subscribed script hash: its script once known, and
// the status the client was last told.
type subscription struct {
	script []byte
	status *string
}

func newSession(s *Server, c frameConn, ip string) *session {
	return &session{s: s, c: c, ip: ip, out: make(chan []byte, outQueue), done: make(chan struct{}),
		wake: make(chan struct{}, 1), subs: map[[32]byte]*subscription{}, dirty: map[[32]byte][]byte{}}
}

func (ss *session) close() {
	ss.once.Do(func() {
		close(ss.done)
		_ = ss.c.Close() // unblocks the reader
	})
}

// run serves the session until the client leaves, breaks a rule that
// ends it, or the server closes.
func (ss *session) run() {
	in := make(chan []byte, inQueue)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ss.reader(in) }()
	go func() { defer wg.Done(); ss.writer() }()
	defer func() {
		ss.close()
		wg.Wait()
	}()
	for {
		select {
		case f, ok := <-in:
			if !ok {
				return
			}
			if f == nil { // the reader's too-large marker
				ss.send(errorFrame(nil, newErr(codeExcessive, "message too large (limit %d bytes)", ss.s.cfg.MaxRequestBytes)))
				ss.flush()
				return
			}
			ss.handle(f)
		case <-ss.wake:
			ss.notify()
		case <-ss.done:
			return
		}
	}
}

// reader reads frames into in until an error; nil marks a frame that was
// too large (the connection ends after it is reported).
func (ss *session) reader(in chan<- []byte) {
	defer close(in)
	for {
		_ = ss.c.SetReadDeadline(time.Now().Add(ss.s.cfg.IdleTimeout))
		f, err := ss.c.ReadFrame()
		if err != nil {
			if errors.Is(err, errFrameTooLarge) {
				select {
				case in <- nil:
				case <-ss.done:
				}
			}
			return
		}
		select {
		case in <- bytes.Clone(f):
		case <-ss.done:
			return
		}
	}
}

func (ss *session) writer() {
	for {
		select {
		case b := <-ss.out:
			_ = ss.c.SetWriteDeadline(time.Now().Add(ss.s.cfg.WriteTimeout))
			if err := ss.c.WriteFrame(b); err != nil {
				ss.close()
				return
			}
		case <-ss.done:
			return
		}
	}
}

// send queues a frame; it waits while the queue is full (the writer's
// deadline bounds that) and drops it once the session ended.
func (ss *session) send(b []byte) {
	select {
	case ss.out <- b:
	case <-ss.done:
	}
}

// flush waits (briefly) until the writer has taken every queued frame,
// before a session that ends on purpose closes.
func (ss *session) flush() {
	deadline := time.Now().Add(time.Second)
	for len(ss.out) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the last frame's write
}

// handle answers one frame: a call or a batch of calls.
func (ss *session) handle(f []byte) {
	if f[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(f, &batch); err != nil {
			ss.send(errorFrame(nil, newErr(codeParseError, "parse error: %v", err)))
			return
		}
		if len(batch) == 0 {
			ss.send(errorFrame(nil, newErr(codeInvalidRequest, "empty batch")))
			return
		}
		answers := make([]json.RawMessage, 0, len(batch))
		for _, raw := range batch {
			if a := ss.call(raw); a != nil {
				answers = append(answers, a)
			}
		}
		if len(answers) > 0 {
			b, err := json.Marshal(answers)
			if err != nil {
				b = errorFrame(nil, newErr(codeInternal, "internal error"))
			}
			ss.send(b)
		}
		return
	}
	if a := ss.call(f); a != nil {
		ss.send(a)
	}
	if ss.ending() {
		ss.flush()
		ss.close()
	}
}

// ending reports whether the session must end after its answer (failed
// version negotiation).
func (ss *session) ending() bool { return ss.version == versionNone }

// call answers one request; nil for a notification from the client.
func (ss *session) call(raw json.RawMessage) []byte {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return errorFrame(nil, newErr(codeParseError, "parse error: %v", err))
		}
		return errorFrame(nil, newErr(codeInvalidRequest, "invalid request: %v", err))
	}
	if req.Method == "" {
		return errorFrame(req.ID, newErr(codeInvalidRequest, "invalid request: no method"))
	}
	ctx, cancel := context.WithTimeout(ss.s.ctx, callTimeout)
	defer cancel()
	result, err := ss.dispatch(ctx, &req)
	if req.isNotification() {
		return nil
	}
	if err != nil {
		return errorFrame(req.ID, ss.s.wireError(req.Method, err))
	}
	b, err := resultFrame(req.ID, result)
	if err != nil {
		return errorFrame(req.ID, ss.s.wireError(req.Method, err))
	}
	return b
}

// markDirty queues a recheck of a script hash (script, if known, is its
// script) or of every subscription (all), and wakes the worker.
func (ss *session) markDirty(sh [32]byte, script []byte, all, headers bool) {
	ss.mu.Lock()
	switch {
	case all:
		ss.dirtyAll = true
	default:
		if old, ok := ss.dirty[sh]; !ok || old == nil {
			ss.dirty[sh] = script
		}
	}
	if headers {
		ss.headersDirty = true
	}
	ss.mu.Unlock()
	select {
	case ss.wake <- struct{}{}:
	default:
	}
}
