package electrum

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/bytebudget"
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
	s  *Server
	c  frameConn
	ip string
	// key is what the per-address caps count this session under: ip, or
	// "" for an exempt local peer (see Server.countedKey).
	key string
	out chan []byte
	// queue counts the bytes of out against MaxQueueBytes (and, through
	// the server's budget, against MaxQueuedBytes).
	queue *bytebudget.Budget
	done  chan struct{}
	once  sync.Once
	wake  chan struct{}

	// Owned by the worker.
	version    string // negotiated; "" until server.version or the first call
	explicit   bool   // server.version was called
	subs       map[[32]byte]*subscription
	outpoints  map[outpoint]*outpointStatus // the status last sent
	headers    bool
	lastHeader *headerNote
	// refused: a call of the last message was refused while the process
	// was late (Refusal.Hold); the session then reads nothing more for
	// refusalPause.
	refused bool

	// Set by the hub, taken by the worker.
	mu           sync.Mutex
	dirty        map[[32]byte][]byte // script hash: its script, if known
	dirtyAll     bool
	headersDirty bool
	dirtyTx      map[bchain.Hash]struct{} // txids whose outpoints to recheck
	dirtyPending bool                     // recheck the pending outpoints too
}

// subscription is a subscribed script hash: its script once known, and
// the status the client was last told.
type subscription struct {
	script []byte
	status *string
	extra  int // bytes counted beyond SubscriptionBytes (the script known when subscribed)
}

func newSession(s *Server, c frameConn, ip string) *session {
	return &session{s: s, c: c, ip: ip, out: make(chan []byte, outQueue), queue: bytebudget.New(int64(s.cfg.MaxQueueBytes)), done: make(chan struct{}),
		wake: make(chan struct{}, 1), subs: map[[32]byte]*subscription{}, dirty: map[[32]byte][]byte{},
		outpoints: map[outpoint]*outpointStatus{}, dirtyTx: map[bchain.Hash]struct{}{}}
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
		for { // give back what was queued and never written
			select {
			case b := <-ss.out:
				ss.sent(len(b))
			default:
				return
			}
		}
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
			if ss.refused {
				ss.refused = false
				ss.pause()
			}
		case <-ss.wake:
			ss.notify()
		case <-ss.done:
			return
		}
	}
}

// refusalPause is how long a session whose call was refused while the
// process was late reads nothing more: a client told to retry that
// pipelines on regardless (a non-reader, a batch bomb looping on its
// refusals) has its messages wait in its socket then, instead of each
// costing a parse and an error frame (the reader stops once in is
// full).
const refusalPause = time.Second

func (ss *session) pause() {
	t := time.NewTimer(refusalPause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ss.done:
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
			err := ss.c.WriteFrame(b)
			ss.sent(len(b))
			if err != nil {
				ss.close()
				return
			}
		case <-ss.done:
			return
		}
	}
}

// send queues a frame; it waits while the queue is full in frames or in
// bytes (this connection's MaxQueueBytes, all connections'
// MaxQueuedBytes) and drops it once the session ended. A client that
// does not read for WriteTimeout while a frame waits is disconnected:
// the wait is what pushes back on a client that pipelines without
// reading (the worker stops, so the reader stops reading it).
func (ss *session) send(b []byte) {
	n := int64(len(b))
	deadline := time.NewTimer(ss.s.cfg.WriteTimeout)
	defer deadline.Stop()
	for {
		alone := ss.queue.Used() == 0
		if ss.queue.TryTake(n, alone) {
			if ss.s.queued.TryTake(n, alone) {
				break
			}
			ss.queue.Give(n)
		}
		select {
		case <-ss.queue.Wait():
		case <-ss.s.queued.Wait():
		case <-deadline.C:
			ss.s.log.Debug("electrum client does not read; disconnected", "ip", ss.ip, "queued", ss.queue.Used())
			ss.close()
			return
		case <-ss.done:
			return
		}
	}
	select {
	case ss.out <- b:
	case <-ss.done:
		ss.sent(len(b))
	}
}

// sent gives back a frame's bytes once written or dropped.
func (ss *session) sent(n int) {
	ss.queue.Give(int64(n))
	ss.s.queued.Give(int64(n))
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
		if len(batch) > ss.s.cfg.MaxBatch {
			ss.send(errorFrame(nil, newErr(codeExcessive, "batch too large: %d calls (limit %d)", len(batch), ss.s.cfg.MaxBatch)))
			return
		}
		if answers := ss.callBatch(batch); len(answers) > 0 {
			ss.send(joinBatch(answers))
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

// callBatch answers a batch's calls while their answers fit in
// MaxAnswerBytes together; the calls after that are not run and are
// answered "response too large", as ElectrumX answers past its MAX_SEND,
// so that a batch of 10,000 header calls cannot become a 400 MB answer.
//
// The answers being built count against the server's MaxQueuedBytes with
// the queued ones (they are held the same way): past it, the rest of the
// batch answers "server busy" (-102), so that many batches at once cannot
// hold MaxAnswerBytes each.
func (ss *session) callBatch(batch []json.RawMessage) []json.RawMessage {
	answers := make([]json.RawMessage, 0, len(batch))
	size, limit := 0, ss.s.cfg.MaxAnswerBytes
	defer func() { ss.s.queued.Give(int64(size)) }()
	var refuse *rpcError
	for _, raw := range batch {
		if refuse == nil && size > limit {
			refuse = tooLarge(limit)
		}
		if refuse != nil {
			var id struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(raw, &id) == nil && (len(id.ID) == 0 || string(id.ID) == "null") {
				continue // a notification: no answer
			}
			answers = append(answers, errorFrame(id.ID, refuse))
			continue
		}
		if a := ss.call(raw); a != nil {
			if !ss.s.queued.TryTake(int64(len(a)), size == 0) {
				refuse = newErr(codeBusy, "server busy: too many answers in progress, retry later")
				answers = append(answers, errorFrame(idOf(raw), refuse))
				continue
			}
			answers = append(answers, a)
			size += len(a)
		}
	}
	return answers
}

// joinBatch frames a batch's answers as one JSON array, sized once: the
// answers are our own encodings, so json.Marshal's validating copy (and
// its buffer doubling) would only hold the batch twice more.
func joinBatch(answers []json.RawMessage) []byte {
	n := 1 + len(answers)
	for _, a := range answers {
		n += len(a)
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, a := range answers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, a...)
	}
	return append(b, ']')
}

// idOf is a call's id (null when it has none or cannot be read).
func idOf(raw json.RawMessage) json.RawMessage {
	var id struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(raw, &id) // unreadable: null
	return id.ID
}

// tooLarge is the answer to a call past the byte cap.
func tooLarge(limit int) *rpcError {
	return newErr(codeExcessive, "response too large (over %d bytes for this call or batch)", limit)
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
	ip := ss.s.countedKey(ss.ip)
	pre := preCost(&req)
	release, ok := ss.s.calls.acquire(ctx, ip, pre)
	if !ok {
		if req.isNotification() {
			return nil
		}
		return errorFrame(req.ID, newErr(codeBusy, "server busy: too many calls of your address in progress, retry later"))
	}
	defer release()
	// The budget is asked once a place is held, so the post-charges of
	// the client's calls that ran before are seen: parallel connections
	// cannot all pass at the pre-cost while the first ones run.
	if ss.s.rate != nil && ip != "" {
		if ref := ss.s.rate.Spend(ip, pre); ref.Msg != "" {
			ss.refused = ss.refused || ref.Hold
			if req.isNotification() {
				return nil
			}
			if ref.Share {
				return errorFrame(req.ID, newErr(codeBusy, "server busy: this client is past its share (%d call units a minute) while the server is behind; retry in %d s",
					ss.s.cfg.CallsPerMinute, ref.Retry))
			}
			return errorFrame(req.ID, newErr(codeExcessive, "rate limit: %d call units a minute from one client (%d at once; a call weighs 1, more by its rows and bytes); retry in %d s",
				ss.s.cfg.CallsPerMinute, ss.s.cfg.CallBurst, ref.Retry))
		}
	}
	if heavyCall(req.Method) {
		leave, ok := ss.s.cfg.Gate.Enter(ctx, "electrum")
		if !ok {
			if req.isNotification() {
				return nil
			}
			return errorFrame(req.ID, newErr(codeBusy, "server busy: too many expensive requests in progress, retry in a second"))
		}
		defer leave()
	}
	ctx, m := withMeter(ctx)
	result, err := ss.dispatch(ctx, &req)
	b, size := ss.answer(&req, result, err)
	ss.charge(ip, pre, m, size)
	return b
}

// answer frames a call's result or error (nil for a notification); size
// is the result's encoded bytes, what the call produced, even when too
// large to send.
func (ss *session) answer(req *request, result any, err error) (b []byte, size int) {
	if req.isNotification() {
		return nil, 0
	}
	if err != nil {
		return errorFrame(req.ID, ss.s.wireError(req.Method, err)), 0
	}
	b, err = resultFrame(req.ID, result)
	if err != nil {
		return errorFrame(req.ID, ss.s.wireError(req.Method, err)), 0
	}
	if len(b) > ss.s.cfg.MaxAnswerBytes {
		return errorFrame(req.ID, tooLarge(ss.s.cfg.MaxAnswerBytes)), len(b)
	}
	return b, len(b)
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
