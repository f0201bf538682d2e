package eth

// A fuzz target of the call tracer's decoding: whatever a node answers to
// debug_traceBlockByHash, lining it up with the block's txs never panics,
// and what it keeps is what the frames say.

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func FuzzCallTracer(f *testing.F) {
	for _, name := range []string{"trace_nested.json", "trace_partial.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"result":{"type":"CREATE2","from":"0x01","to":"0x02","value":"0x5","calls":[{"type":"SELFDESTRUCT","from":"0x02","to":"0x03","value":"0x1"}]}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var res []traceResult
		if json.Unmarshal(b, &res) != nil {
			return
		}
		hashes := make([]bchain.Hash, len(res))
		for i, r := range res {
			if r.TxHash != nil {
				hashes[i] = bchain.Hash(*r.TxHash)
			}
		}
		out, err := internalFromTraces(res, hashes)
		if len(out) != len(res) {
			t.Fatalf("%d results for %d txs", len(out), len(res))
		}
		for i, d := range out {
			if (d == nil) != (res[i].Result == nil) {
				t.Fatalf("tx %d: data %v for result %v", i, d, res[i].Result)
			}
			if d == nil {
				if err == nil {
					t.Fatalf("tx %d has no result and no error", i)
				}
				continue
			}
			for _, tr := range d.Transfers {
				if tr.Value == nil || tr.Value.Sign() < 0 || tr.Type > bchain.EthInternalSelfDestruct {
					t.Fatalf("tx %d: transfer %+v", i, tr)
				}
				if tr.Type != bchain.EthInternalCreate && tr.Value.Sign() == 0 {
					t.Fatalf("tx %d: a transfer that moves nothing: %+v", i, tr)
				}
			}
			if d.Error != "" && (len(d.Transfers) > 0 || len(d.Contracts) > 0) {
				t.Fatalf("tx %d failed (%s) but moved value: %+v", i, d.Error, d)
			}
		}
	})
}
