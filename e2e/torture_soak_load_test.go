package e2e

// The soak's clients (TestTortureSoak): REST clients in a loop over a mix
// of routes, websocket clients subscribed to blocks, their addresses and
// every new tx, asking a mix of methods now and then. Every answer that
// the chain decides is checked against the oracle's range of heights.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/tools/soak"
)

type soakLoad struct {
	base   string
	oracle *soakOracle
	payees []string
	xpub   string
	http   *http.Client
	rest   *soak.Stats
	ws     *soak.Stats
}

// addrAnswer is the part of an address or account answer checked.
type addrAnswer struct {
	Balance       string `json:"balance"`
	TotalReceived string `json:"totalReceived"`
	TotalSent     string `json:"totalSent"`
	Txs           int    `json:"txs"`
}

func (a addrAnswer) state() (addrState, error) {
	var s addrState
	var err error
	if s.Balance, err = strconv.ParseInt(a.Balance, 10, 64); err != nil {
		return s, fmt.Errorf("balance %q: %w", a.Balance, err)
	}
	if s.Received, err = strconv.ParseInt(a.TotalReceived, 10, 64); err != nil {
		return s, fmt.Errorf("totalReceived %q: %w", a.TotalReceived, err)
	}
	if s.Sent, err = strconv.ParseInt(a.TotalSent, 10, 64); err != nil {
		return s, fmt.Errorf("totalSent %q: %w", a.TotalSent, err)
	}
	s.Txs = a.Txs
	return s, nil
}

// txAnswer is the part of a tx answer checked.
type txAnswer struct {
	Txid          string `json:"txid"`
	BlockHash     string `json:"blockHash"`
	BlockHeight   int32  `json:"blockHeight"`
	Confirmations int32  `json:"confirmations"`
}

// checkTx: the tx is in its block, and its confirmations count from a tip
// in [lo, hi].
func (l *soakLoad) checkTx(st *soak.Stats, want *soakTx, got txAnswer, lo, hi int32) {
	hash, _ := l.oracle.block(want.height)
	tip := got.BlockHeight + got.Confirmations - 1
	if got.Txid != want.txid || got.BlockHeight != want.height || got.BlockHash != hash || tip < lo || tip > hi {
		st.Wrong("tx %s: height %d hash %s confirmations %d; want height %d hash %s, tip in [%d, %d]",
			want.txid, got.BlockHeight, got.BlockHash, got.Confirmations, want.height, hash, lo, hi)
	}
}

// checkAddr: the answer is the address's state at a height in [lo, hi].
func (l *soakLoad) checkAddr(st *soak.Stats, addr string, got addrAnswer, lo, hi int32) {
	s, err := got.state()
	if err != nil {
		st.Wrong("address %s: %v", addr, err)
		return
	}
	if !l.oracle.stateIn(addr, s, lo, hi) {
		st.Wrong("address %s: %+v is its state at no height in [%d, %d]", addr, s, lo, hi)
	}
}

// get is one REST request of the load, as the public client, timed and
// counted; ok reports whether there is an answer to check.
func (l *soakLoad) get(path string, out any) bool {
	start := time.Now()
	code, err := soak.Get(context.Background(), l.http, l.base+path, soakHeader(), out)
	op, _, _ := strings.Cut(strings.TrimPrefix(path, "/api/v2/"), "/")
	l.rest.Done(op, time.Since(start), code == http.StatusTooManyRequests, err)
	return err == nil
}

// restClient runs REST requests with a pause of 0.25–0.75 s between them until
// ctx ends; a request under way is finished, not cancelled.
func (l *soakLoad) restClient(ctx context.Context, i int) {
	rng := rand.New(rand.NewPCG(uint64(i), 5))
	for n := 0; ctx.Err() == nil; n++ {
		l.restOp(rng, i+n)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(250+rng.IntN(500)) * time.Millisecond):
		}
	}
}

// Long: the REST mix is one switch over the routes with each route's
// check beside it.
func (l *soakLoad) restOp(rng *rand.Rand, n int) {
	o := l.oracle
	lo := o.lo()
	hot := o.hot[rng.IntN(len(o.hot))]
	switch r := rng.IntN(20); {
	case r < 6:
		var a addrAnswer
		if l.get("/api/v2/address/"+hot+"?details=basic", &a) {
			l.checkAddr(l.rest, hot, a, lo, o.hi())
		}
	case r < 9:
		var us []struct {
			Value         string `json:"value"`
			Confirmations int    `json:"confirmations"`
		}
		if !l.get("/api/v2/utxo/"+hot+"?confirmed=true", &us) {
			return
		}
		hi := o.hi()
		var sum int64
		for _, u := range us {
			v, err := strconv.ParseInt(u.Value, 10, 64)
			if err != nil || u.Confirmations < 1 {
				l.rest.Wrong("utxo of %s: %+v", hot, u)
				return
			}
			sum += v
		}
		if !o.balanceIn(hot, sum, lo, hi) {
			l.rest.Wrong("utxos of %s sum to %d, its balance at no height in [%d, %d]", hot, sum, lo, hi)
		}
	case r < 12:
		tx := o.minedTx(n)
		if tx == nil {
			l.get("/api/v2", nil)
			return
		}
		var got txAnswer
		if l.get("/api/v2/tx/"+tx.txid, &got) {
			l.checkTx(l.rest, tx, got, lo, o.hi())
		}
	case r < 15:
		h := lo - int32(rng.IntN(50))
		var b struct {
			Hash    string `json:"hash"`
			TxCount int    `json:"txCount"`
		}
		if l.get(fmt.Sprintf("/api/v2/block/%d?pageSize=1", h), &b) {
			if hash, ntx := o.block(h); b.Hash != hash || b.TxCount != ntx {
				l.rest.Wrong("block %d: %s with %d txs, want %s with %d", h, b.Hash, b.TxCount, hash, ntx)
			}
		}
	case r < 18:
		var s status
		if l.get("/api/v2", &s) {
			if hi := o.hi(); int32(s.Blockbook.BestHeight) < lo || int32(s.Blockbook.BestHeight) > hi {
				l.rest.Wrong("status: best height %d outside [%d, %d]", s.Blockbook.BestHeight, lo, hi)
			}
		}
	default:
		var a addrAnswer
		if l.get("/api/v2/xpub/"+url.PathEscape(l.xpub)+"?details=basic", &a) && (a.Balance != "0" || a.Txs != 0) {
			l.rest.Wrong("unused xpub: %+v", a)
		}
	}
}

// balanceIn reports whether the address had balance b at a height in [lo, hi].
func (o *soakOracle) balanceIn(addr string, b int64, lo, hi int32) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	for h := max(lo, o.start); h <= hi && int(h-o.start) < len(o.states); h++ {
		if o.states[h-o.start][addr].Balance == b {
			return true
		}
	}
	return false
}

// soakSub is one websocket client and the notifications it received, as
// flags by block height (from the soak's start) and by payment number.
type soakSub struct {
	ws     *soak.WS
	payees [2]int

	mu                     sync.Mutex
	blockID, addrID, txID  string
	blocks, addrNotes, txs []bool
	bad                    []string
}

func mark(flags *[]bool, i int) {
	for len(*flags) <= i {
		*flags = append(*flags, false)
	}
	(*flags)[i] = true
}

// onNote records a notification, checking that it is about the soak's
// chain and payments.
func (s *soakSub) onNote(o *soakOracle, payees []string, id string, data json.RawMessage) {
	var n struct {
		Height  int32  `json:"height"`
		Hash    string `json:"hash"`
		Txid    string `json:"txid"`
		Address string `json:"address"`
		Tx      struct {
			Txid string `json:"txid"`
		} `json:"tx"`
	}
	err := json.Unmarshal(data, &n)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		s.bad = append(s.bad, fmt.Sprintf("notification %s: %v", id, err))
	case id == s.blockID:
		if n.Height <= o.start || n.Height > o.hi() {
			s.bad = append(s.bad, fmt.Sprintf("block notification of height %d", n.Height))
		} else if hash, _ := o.block(n.Height); hash != n.Hash {
			s.bad = append(s.bad, fmt.Sprintf("block notification %d %s, want %s", n.Height, n.Hash, hash))
		} else {
			mark(&s.blocks, int(n.Height-o.start-1))
		}
	case id == s.txID:
		if seq := o.seqOf(n.Txid); seq < 0 {
			s.bad = append(s.bad, "new-tx notification of an unknown tx "+n.Txid)
		} else {
			mark(&s.txs, seq)
		}
	case id == s.addrID:
		seq := o.seqOf(n.Tx.Txid)
		if seq < 0 || (payees[s.payees[0]] != n.Address && payees[s.payees[1]] != n.Address) {
			s.bad = append(s.bad, fmt.Sprintf("address notification %s %s not subscribed", n.Address, n.Tx.Txid))
		} else {
			mark(&s.addrNotes, seq)
		}
	default:
		s.bad = append(s.bad, fmt.Sprintf("notification with unknown id %s: %.100s", id, data))
	}
}

// connect opens n websocket clients, each subscribed to new blocks, two
// of the payees and every new tx.
func (l *soakLoad) connect(t *testing.T, n int) []*soakSub {
	t.Helper()
	subs := make([]*soakSub, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := range subs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			subs[i], errs[i] = l.subscribe(i)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range subs {
			if s != nil {
				s.ws.Close()
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("connecting the websocket clients: %v", err)
	}
	return subs
}

func (l *soakLoad) subscribe(i int) (*soakSub, error) {
	s := &soakSub{payees: [2]int{i % soakPayees, (i + 3) % soakPayees}}
	ws, _, err := soak.Dial(context.Background(), l.base, soakHeader(), func(id string, data json.RawMessage) {
		s.onNote(l.oracle, l.payees, id, data)
	})
	if err != nil {
		return nil, fmt.Errorf("client %d: %w", i, err)
	}
	s.ws = ws
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var ids [3]string
	for k, req := range []struct {
		method string
		params any
	}{
		{"subscribeNewBlock", nil},
		{"subscribeAddresses", map[string]any{"addresses": []string{l.payees[s.payees[0]], l.payees[s.payees[1]]}}},
		{"subscribeNewTransaction", nil},
	} {
		id, data, err := ws.Call(ctx, req.method, req.params)
		var res struct{ Subscribed bool }
		if err == nil && (json.Unmarshal(data, &res) != nil || !res.Subscribed) {
			err = fmt.Errorf("%s: %s", req.method, data)
		}
		if err != nil {
			ws.Close()
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
		ids[k] = id
	}
	s.mu.Lock()
	s.blockID, s.addrID, s.txID = ids[0], ids[1], ids[2]
	s.mu.Unlock()
	return s, nil
}

// call is one websocket request of the load, timed and counted; ok
// reports whether there is an answer to check.
func (l *soakLoad) call(s *soakSub, method string, params, out any) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	_, data, err := s.ws.Call(ctx, method, params)
	if err == nil && out != nil {
		if err = json.Unmarshal(data, out); err != nil {
			err = fmt.Errorf("%s: %w: %.200s", method, err, data)
		}
	}
	l.ws.Done(method, time.Since(start), false, err)
	return err == nil
}

// wsClient asks a request every few seconds until ctx ends.
func (l *soakLoad) wsClient(ctx context.Context, i int, s *soakSub) {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-s.ws.Closed():
			return // counted by waitNotifications
		case <-time.After(time.Duration(2000+rng.IntN(4000)) * time.Millisecond):
		}
		l.wsOp(rng, s, i+n)
	}
}

func (l *soakLoad) wsOp(rng *rand.Rand, s *soakSub, n int) {
	o := l.oracle
	lo := o.lo()
	switch r := rng.IntN(10); {
	case r < 3:
		hot := o.hot[rng.IntN(len(o.hot))]
		var a addrAnswer
		if l.call(s, "getAccountInfo", map[string]any{"descriptor": hot, "details": "basic"}, &a) {
			l.checkAddr(l.ws, hot, a, lo, o.hi())
		}
	case r < 5:
		var info struct {
			BestHeight int32  `json:"bestHeight"`
			BestHash   string `json:"bestHash"`
		}
		if l.call(s, "getInfo", nil, &info) {
			hi := o.hi()
			if info.BestHeight < lo || info.BestHeight > hi {
				l.ws.Wrong("getInfo: best height %d outside [%d, %d]", info.BestHeight, lo, hi)
			} else if hash, _ := o.block(info.BestHeight); hash != info.BestHash {
				l.ws.Wrong("getInfo: best %d %s, want %s", info.BestHeight, info.BestHash, hash)
			}
		}
	case r < 7:
		tx := o.minedTx(n)
		if tx == nil {
			l.call(s, "getInfo", nil, nil)
			return
		}
		var got txAnswer
		if l.call(s, "getTransaction", map[string]any{"txid": tx.txid}, &got) {
			l.checkTx(l.ws, tx, got, lo, o.hi())
		}
	case r < 8:
		h := lo - int32(rng.IntN(50))
		var got struct {
			Hash string `json:"hash"`
		}
		if l.call(s, "getBlockHash", map[string]any{"height": h}, &got) {
			if hash, _ := o.block(h); got.Hash != hash {
				l.ws.Wrong("getBlockHash %d: %s, want %s", h, got.Hash, hash)
			}
		}
	default:
		var fees []struct {
			FeePerUnit string `json:"feePerUnit"`
		}
		if l.call(s, "estimateFee", map[string]any{"blocks": []int{1, 2, 6}}, &fees) && len(fees) != 3 {
			l.ws.Wrong("estimateFee for 3 targets: %d answers", len(fees))
		}
	}
}

// waitNotifications waits (a failure guard) until every client has every
// block notification of the soak, every new-tx notification and those of
// its addresses; it returns the notifications delivered and expected, and
// fails on unexpected ones and on connections the server closed.
func (l *soakLoad) waitNotifications(t *testing.T, subs []*soakSub) (delivered, expected int) {
	t.Helper()
	o := l.oracle
	o.mu.RLock()
	blocks, txs := int(o.tip-o.start), len(o.txs)
	perPayee := make([]int, soakPayees)
	for _, tx := range o.txs {
		perPayee[tx.payee]++
	}
	o.mu.RUnlock()
	count := func(flags []bool) (n int) {
		for _, f := range flags {
			if f {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(waitFor)
	for {
		delivered, expected = 0, 0
		for _, s := range subs {
			s.mu.Lock()
			delivered += count(s.blocks) + count(s.txs) + count(s.addrNotes)
			s.mu.Unlock()
			expected += blocks + txs + perPayee[s.payees[0]] + perPayee[s.payees[1]]
		}
		if delivered == expected || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, s := range subs {
		s.mu.Lock()
		for _, b := range s.bad {
			t.Errorf("client %d: %s", i, b)
		}
		s.mu.Unlock()
		if err := s.ws.Err(); err != nil {
			t.Errorf("client %d: the connection ended during the soak: %v", i, err)
			l.ws.Done("connection", 0, false, err)
		}
	}
	return delivered, expected
}

// checkConnLimit shows that the soak's connections counted against the
// raised per-client limit (so the limits were exercised, not bypassed):
// one more connection fits, the next is refused with 429. It is skipped
// when connections were lost (waitNotifications failed the test then).
func (l *soakLoad) checkConnLimit(t *testing.T, subs []*soakSub) {
	t.Helper()
	for _, s := range subs {
		if s.ws.Err() != nil {
			return
		}
	}
	extra, _, err := soak.Dial(context.Background(), l.base, soakHeader(), nil)
	if err != nil {
		t.Errorf("connection %d (the limit is %d): %v", len(subs)+1, len(subs)+1, err)
		return
	}
	defer extra.Close()
	over, resp, err := soak.Dial(context.Background(), l.base, soakHeader(), nil)
	if err == nil {
		over.Close()
		t.Errorf("connection %d over the raised limit %d was accepted", len(subs)+2, len(subs)+1)
		return
	}
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("connection over the raised limit: %v %v, want 429", err, resp)
	}
}
