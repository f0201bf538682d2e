package runestone

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// mainnetTx is a recorded mainnet tx (testdata/mainnet.json, whose origin
// field names the public repository it comes from) with the decoded values
// published beside it.
type mainnetTx struct {
	Txid            string   `json:"txid"`
	Height          uint32   `json:"height"`
	Note            string   `json:"note"`
	Outputs         int      `json:"outputs"`
	RunestoneVout   int      `json:"runestoneVout"`
	RunestoneScript string   `json:"runestoneScript"`
	OutputScripts   []string `json:"outputScripts"`
	Expect          struct {
		Kind    string `json:"kind"`
		Flaw    string `json:"flaw"`
		Etching *struct {
			Name, Divisibility, Premine, Symbol, Amount, Cap string
			Turbo                                            bool
		} `json:"etching"`
		Mint         string   `json:"mint"`
		Pointer      *uint32  `json:"pointer"`
		EdictAmounts []string `json:"edictAmounts"`
		EdictOutputs []uint32 `json:"edictOutputs"`
		EdictIDs     []string `json:"edictIDs"`
	} `json:"expect"`
}

func loadMainnet(t *testing.T) []mainnetTx {
	t.Helper()
	b, err := os.ReadFile("testdata/mainnet.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Origin string      `json:"origin"`
		Txs    []mainnetTx `json:"txs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Origin == "" || len(doc.Txs) == 0 {
		t.Fatalf("testdata/mainnet.json: %v", err)
	}
	return doc.Txs
}

// scripts are the tx's output scripts; where only the count is kept, the
// others are a plain P2TR script (none of them is an OP_RETURN).
func (m *mainnetTx) scripts(t *testing.T) [][]byte {
	t.Helper()
	out := make([][]byte, m.Outputs)
	p2tr, _ := hex.DecodeString("5120" + "0000000000000000000000000000000000000000000000000000000000000001")
	for i := range out {
		out[i] = p2tr
		if i < len(m.OutputScripts) {
			out[i], _ = hex.DecodeString(m.OutputScripts[i])
		}
	}
	rs, err := hex.DecodeString(m.RunestoneScript)
	if err != nil {
		t.Fatal(err)
	}
	out[m.RunestoneVout] = rs
	return out
}

func TestMainnetTxs(t *testing.T) {
	txs := loadMainnet(t)
	var judgeTxs [][]string
	for _, m := range txs {
		scripts := m.scripts(t)
		a := Decipher(scripts)
		e := m.Expect
		h := make([]string, len(scripts))
		for i, s := range scripts {
			h[i] = hex.EncodeToString(s)
		}
		judgeTxs = append(judgeTxs, h)
		switch {
		case a == nil:
			t.Errorf("%s: no runestone", m.Txid)
			continue
		case e.Kind == "cenotaph":
			if a.Cenotaph == nil || a.Cenotaph.Flaw.ID() != e.Flaw {
				t.Errorf("%s: %+v, want a cenotaph with flaw %s", m.Txid, a, e.Flaw)
			}
			continue
		case a.Runestone == nil:
			t.Errorf("%s: cenotaph %s, want a runestone", m.Txid, a.Cenotaph.Flaw.ID())
			continue
		}
		r := a.Runestone
		if et := e.Etching; et != nil {
			g := r.Etching
			if g == nil || g.Rune == nil || g.Terms == nil {
				t.Errorf("%s: etching %+v", m.Txid, g)
				continue
			}
			got := []string{SpacedRune{*g.Rune, *g.Spacers}.String(), toString(*g.Divisibility), g.Premine.String(),
				string(*g.Symbol), g.Terms.Amount.String(), g.Terms.Cap.String()}
			want := []string{et.Name, et.Divisibility, et.Premine, et.Symbol, et.Amount, et.Cap}
			if !reflect.DeepEqual(got, want) || g.Turbo != et.Turbo {
				t.Errorf("%s: etching %v turbo %v, want %v turbo %v", m.Txid, got, g.Turbo, want, et.Turbo)
			}
		}
		if e.Mint != "" && (r.Mint == nil || r.Mint.String() != e.Mint) {
			t.Errorf("%s: mint %v, want %s", m.Txid, r.Mint, e.Mint)
		}
		if e.Pointer != nil && (r.Pointer == nil || *r.Pointer != *e.Pointer) {
			t.Errorf("%s: pointer %v, want %d", m.Txid, r.Pointer, *e.Pointer)
		}
		if e.EdictAmounts != nil {
			var amounts, ids []string
			var outs []uint32
			for _, d := range r.Edicts {
				amounts = append(amounts, d.Amount.String())
				outs = append(outs, d.Output)
				ids = append(ids, d.ID.String())
			}
			if len(amounts) != len(e.EdictAmounts) || (len(amounts) > 0 && !reflect.DeepEqual(amounts, e.EdictAmounts)) ||
				(e.EdictOutputs != nil && !reflect.DeepEqual(outs, e.EdictOutputs)) ||
				(e.EdictIDs != nil && !reflect.DeepEqual(ids, e.EdictIDs)) {
				t.Errorf("%s: edicts %v %v %v, want %v %v %v", m.Txid, ids, amounts, outs, e.EdictIDs, e.EdictAmounts, e.EdictOutputs)
			}
		}
	}
	// and the judge agrees on every field
	a := askJudge(t, judgeQuery{Txs: judgeTxs})
	for i, m := range txs {
		scripts := m.scripts(t)
		if got := judged(Decipher(scripts)); !reflect.DeepEqual(got, a.Txs[i]) {
			t.Errorf("%s: ours %+v, judge %+v", m.Txid, got, a.Txs[i])
		}
	}
}
