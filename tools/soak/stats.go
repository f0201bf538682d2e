// Package soak is the load kit of the soak campaign (e2e/torture_soak_test.go):
// request statistics, a websocket client that matches answers to requests
// and counts notifications, and a memory sampler for the server process.
// What a right answer is stays with the caller, who knows the chain.
package soak

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Stats counts requests and their outcomes; safe for concurrent use.
type Stats struct {
	mu       sync.Mutex
	requests int64
	errors   int64 // transport errors, unexpected statuses, error answers
	tooMany  int64 // 429 answers (counted apart from errors)
	wrong    int64 // answers that disagree with the oracle
	lat      []time.Duration
	examples []string
	byOp     map[string]int64 // failures (errors and 429s) by operation
}

// maxExamples bounds the failure messages kept for the report.
const maxExamples = 10

// Summary is a snapshot of Stats.
type Summary struct {
	Requests, Errors, TooMany, Wrong int64
	P50, P99, Max                    time.Duration
	Examples                         []string
	// FailuresByOp counts errors and 429s by operation (route or method).
	FailuresByOp map[string]int64
}

// Done records one finished request of operation op: its latency, and a
// failure (err) when it failed; tooMany marks a 429.
func (s *Stats) Done(op string, took time.Duration, tooMany bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.lat = append(s.lat, took)
	if tooMany || err != nil {
		if s.byOp == nil {
			s.byOp = map[string]int64{}
		}
		s.byOp[op]++
	}
	switch {
	case tooMany:
		s.tooMany++
		s.example("429: %v", err)
	case err != nil:
		s.errors++
		s.example("error: %v", err)
	}
}

// Wrong records an answer that is not what the chain holds.
func (s *Stats) Wrong(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wrong++
	s.example("wrong: "+format, args...)
}

func (s *Stats) example(format string, args ...any) {
	if len(s.examples) < maxExamples {
		s.examples = append(s.examples, fmt.Sprintf(format, args...))
	}
}

// Summary returns the counts and latency percentiles so far.
func (s *Stats) Summary() Summary {
	s.mu.Lock()
	lat := slices.Clone(s.lat)
	sum := Summary{Requests: s.requests, Errors: s.errors, TooMany: s.tooMany, Wrong: s.wrong,
		Examples: slices.Clone(s.examples), FailuresByOp: maps.Clone(s.byOp)}
	s.mu.Unlock()
	slices.Sort(lat)
	sum.P50, sum.P99 = Percentile(lat, 50), Percentile(lat, 99)
	if len(lat) > 0 {
		sum.Max = lat[len(lat)-1]
	}
	return sum
}

// Percentile of sorted durations (nearest rank); 0 for none.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100 // ceil(n*p/100), a rank from 1
	return sorted[min(max(i, 1), len(sorted))-1]
}
