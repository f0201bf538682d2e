package electrum

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// headerBatch is a batch of n blockchain.block.headers calls from height 0.
func headerBatch(n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.block.headers","params":[0,2016]}`, i)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// A batch's answers stop at MaxAnswerBytes: the calls past it are answered
// "response too large" without being run, and a batch over MaxBatch is
// refused whole.
func TestBatchBoundedInBytes(t *testing.T) {
	one := newServed(t, Config{}).negotiated(t, "1.4").call("blockchain.block.headers", 0, 2016)
	if one.Error != nil {
		t.Fatalf("one call: %+v", one.Error)
	}
	per := len(one.Result) + 40 // the frame around the result
	limit := 3*per + per/2
	s := newServed(t, Config{MaxAnswerBytes: limit, MaxBatch: 50})
	c := s.negotiated(t, "1.4")
	c.sendLine(headerBatch(50))
	line := c.readLine()
	var answers []answer
	if err := json.Unmarshal([]byte(line), &answers); err != nil {
		t.Fatalf("batch answer: %v", err)
	}
	if len(answers) != 50 {
		t.Fatalf("%d answers to 50 calls", len(answers))
	}
	results, tooBig := 0, 0
	for _, a := range answers {
		switch {
		case a.Error == nil:
			results++
		case a.Error.Code == codeExcessive && strings.Contains(a.Error.Message, "response too large"):
			tooBig++
		default:
			t.Fatalf("unexpected answer %+v", a.Error)
		}
	}
	if results != 4 || tooBig != 46 {
		t.Fatalf("%d results and %d too large (%d bytes each)", results, tooBig, per)
	}
	if len(line) > limit+per+50*200 {
		t.Fatalf("the batch's answer is %d bytes", len(line))
	}
	c.sendLine(headerBatch(51))
	if line := c.readLine(); !strings.Contains(line, "batch too large") {
		t.Fatalf("a batch over MaxBatch: %s", line)
	}
}

// A client that pipelines batches and never reads holds at most its
// queue's bytes plus one answer; once it reads, everything is answered.
func TestSendQueueBoundedInBytes(t *testing.T) {
	const limit = 512 << 10
	s := newServed(t, Config{MaxQueueBytes: limit})
	c := s.negotiated(t, "1.4")
	// 20 MB of answers in all: more than the kernel's socket buffers
	// hold, so that the server's queue fills.
	const batches = 100
	batch := headerBatch(10)
	per := len(c.call("blockchain.block.headers", 0, 2016).Result) * 10
	if per*batches < 8*limit || per > limit/2 {
		t.Fatalf("answers of %d bytes: the test needs them to fill the queue several times, two to a queue", per)
	}
	go func() { // blocks once the server stops reading; reading below frees it
		for i := 0; i < batches; i++ {
			if _, err := c.c.Write([]byte(batch + "\n")); err != nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(ioGuard) // a failure guard
	for s.srv.QueuedBytes() < limit-int64(per) {
		if q := s.srv.QueuedBytes(); q > limit+int64(per) {
			t.Fatalf("queued %d bytes for one connection (limit %d plus one answer of %d)", q, limit, per)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue never filled: %d bytes", s.srv.QueuedBytes())
		}
		time.Sleep(time.Millisecond)
	}
	if q := s.srv.QueuedBytes(); q > limit+int64(per) {
		t.Fatalf("queued %d bytes for one connection (limit %d plus one answer of %d)", q, limit, per)
	}
	for i := 0; i < batches; i++ {
		if line := c.readLine(); !strings.HasPrefix(line, "[") {
			t.Fatalf("answer %d: %.200s", i, line)
		}
	}
}
