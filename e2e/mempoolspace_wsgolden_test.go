package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// Goldens of mempool.space's newer websocket messages (track-txs,
// track-scriptpubkeys, track-mempool and track-mempool-txids, projected
// block lists and deltas, live-2h-chart), written in checkFullMempool's
// scenario while the mempool is still small and type-checked by
// `make test-wire` against mempool's own interfaces
// (tools/js/check-goldens.mjs, testdata/mempoolspace-ws).

type mpWSGoldens struct {
	t  *testing.T
	ws *mpWSClient
	gs *goldenSet
}

// startWSGoldens tracks the mempool, its txids, projected block 0 and the
// output script spk (hex) on a client of its own.
func startWSGoldens(t *testing.T, esplora, spk string) *mpWSGoldens {
	t.Helper()
	w := &mpWSGoldens{t: t, ws: dialMpWS(t, esplora),
		gs: newGoldenSet(t, filepath.Join(goldenDir, "mempoolspace-ws"), "TestE2EMempoolSpaceWebsocket")}
	w.ws.send(map[string]any{"track-mempool-block": 0})
	w.ws.await("track-mempool-block 0", []string{"projected-block-transactions"}, nil)
	w.ws.send(map[string]any{"track-mempool": true})
	w.ws.send(map[string]any{"track-mempool-txids": true})
	w.ws.send(map[string]any{"track-scriptpubkeys": []string{spk}})
	return w
}

// first writes the goldens of the scenario's first tx id entering the
// mempool, then stops tracking the mempool (the big txs follow; projected
// block 0's compressed list stays small).
func (w *mpWSGoldens) first(id string) {
	t := w.t
	t.Helper()
	m := w.ws.await("mempool-txids of the first tx", []string{"mempool-txids", "mempool-transactions"}, func(m map[string]json.RawMessage) bool {
		return slices.Contains(decode[mempoolTxids](t, m["mempool-txids"]).Added, id)
	})
	w.check("mempool-txids", m["mempool-txids"])
	w.check("mempool-transactions", m["mempool-transactions"])
	w.ws.send(map[string]any{"track-mempool-block": 0})
	m = w.ws.await("projected block 0, whole", []string{"projected-block-transactions"}, func(m map[string]json.RawMessage) bool {
		return slices.ContainsFunc(decode[projectedBlockTxs](t, m["projected-block-transactions"]).BlockTransactions,
			func(tx []any) bool { return tx[0] == id })
	})
	w.check("projected-block-transactions", m["projected-block-transactions"])
	w.ws.send(map[string]any{"track-txs": []string{id}})
	m = w.ws.await("tracked-txs", []string{"tracked-txs"}, func(m map[string]json.RawMessage) bool {
		return decode[map[string]trackedTx](t, m["tracked-txs"])[id].Position != nil
	})
	w.check("tracked-txs-position", m["tracked-txs"])
	w.ws.send(map[string]any{"track-mempool": false, "track-mempool-txids": false})
}

// delta writes the golden of projected block 0's delta adding the small
// tx id (block 0 holds two txs: the delta, not the whole list, is sent),
// then stops tracking the block.
func (w *mpWSGoldens) delta(id string) {
	t := w.t
	t.Helper()
	m := w.ws.await("projected block 0's delta", []string{"projected-block-transactions"}, func(m map[string]json.RawMessage) bool {
		p := decode[projectedBlockTxs](t, m["projected-block-transactions"])
		return p.Delta != nil && slices.ContainsFunc(p.Delta.Added, func(tx []any) bool { return tx[0] == id })
	})
	w.check("projected-block-transactions-delta", m["projected-block-transactions"])
	w.ws.send(map[string]any{"track-mempool-block": -1})
}

// replaced writes the goldens of the tracked tx replaced by repl and of
// the tracked script's pending tx.
func (w *mpWSGoldens) replaced(id, repl string) {
	t := w.t
	t.Helper()
	m := w.ws.await("tracked-txs replacedBy", []string{"tracked-txs"}, func(m map[string]json.RawMessage) bool {
		return decode[map[string]trackedTx](t, m["tracked-txs"])[id].ReplacedBy == repl
	})
	w.check("tracked-txs-replaced", m["tracked-txs"])
	m = w.take(m, "multi-scriptpubkey-transactions", "multi-scriptpubkey-transactions", func(map[string]json.RawMessage) bool { return true })
	w.check("multi-scriptpubkey-transactions", m["multi-scriptpubkey-transactions"])
	w.ws.send(map[string]any{"track-txs": []string{}, "track-scriptpubkeys": []string{}})
}

// chart writes the golden of a live-2h-chart sample of count txs.
func (w *mpWSGoldens) chart(count int) {
	t := w.t
	t.Helper()
	w.ws.send(map[string]any{"action": "want", "data": []string{"live-2h-chart"}})
	m := w.ws.await("live-2h-chart", []string{"live-2h-chart"}, func(m map[string]json.RawMessage) bool {
		return decode[struct{ Count int }](t, m["live-2h-chart"]).Count == count
	})
	w.check("live-2h-chart", m["live-2h-chart"])
	w.gs.finish()
}

// take returns m when it holds key and passes ok (one push carries
// several parts), else the next message that does.
func (w *mpWSGoldens) take(m map[string]json.RawMessage, what, key string, ok func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
	w.t.Helper()
	if _, has := m[key]; has && ok(m) {
		return m
	}
	return w.ws.await(what, []string{key}, ok)
}

func (w *mpWSGoldens) check(name string, raw json.RawMessage) {
	w.t.Helper()
	w.gs.check(name, normalizeMpWS(w.t, raw))
}

// mpWSVolatile are a message's top-level numbers that depend on the
// clock or on how many mempool changes came before.
var mpWSVolatile = map[string]bool{"time": true, "added": true, "sequence": true, "vbytes_per_second": true}

var txidRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// normalizeMpWS re-indents a message with its volatile numbers zeroed:
// the top-level fields above, firstSeen anywhere and a compressed tx's
// first-seen time (its 7th entry).
func normalizeMpWS(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	var walk func(v any, top bool)
	walk = func(v any, top bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if _, num := e.(json.Number); num && (k == "firstSeen" || top && mpWSVolatile[k]) {
					x[k] = json.Number("0")
				}
				walk(x[k], false)
			}
		case []any:
			if len(x) >= 7 && len(x) <= 8 {
				if s, ok := x[0].(string); ok && txidRe.MatchString(s) {
					if _, num := x[6].(json.Number); num {
						x[6] = json.Number("0")
					}
				}
			}
			for _, e := range x {
				walk(e, false)
			}
		}
	}
	walk(v, true)
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}
