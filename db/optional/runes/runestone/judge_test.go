package runestone

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The judge is @ordjs/runestone (npm, pinned in tools/js/package.json):
// ord's own ordinals crate compiled to WebAssembly, run by node on
// tools/js/runestone-judge.mjs.
var judgeScript = filepath.Join("..", "..", "..", "..", "tools", "js", "runestone-judge.mjs")

type judgeTerms struct {
	Amount      *string `json:"amount"`
	Cap         *string `json:"cap"`
	HeightStart *string `json:"heightStart"`
	HeightEnd   *string `json:"heightEnd"`
	OffsetStart *string `json:"offsetStart"`
	OffsetEnd   *string `json:"offsetEnd"`
}

type judgeEtching struct {
	Divisibility *string     `json:"divisibility"`
	Premine      *string     `json:"premine"`
	Rune         *string     `json:"rune"`
	Spacers      *string     `json:"spacers"`
	Symbol       *string     `json:"symbol"`
	Terms        *judgeTerms `json:"terms"`
	Turbo        bool        `json:"turbo"`
}

type judgeEdict struct {
	ID     string `json:"id"`
	Amount string `json:"amount"`
	Output string `json:"output"`
}

type judgeRunestone struct {
	Edicts  []judgeEdict  `json:"edicts"`
	Etching *judgeEtching `json:"etching"`
	Mint    *string       `json:"mint"`
	Pointer *string       `json:"pointer"`
}

type judgeArtifact struct {
	Kind      string          `json:"kind"`
	Flaw      string          `json:"flaw,omitempty"`
	Runestone *judgeRunestone `json:"runestone,omitempty"`
	Error     string          `json:"error,omitempty"`
}

type judgeSpaced struct {
	Value   string `json:"value"`
	Spacers string `json:"spacers"`
	Name    string `json:"name"`
}

type judgeQuery struct {
	Txs        [][]string `json:"txs"`
	Names      []string   `json:"names"`
	Spaced     []string   `json:"spaced"`
	Minimum    [][2]any   `json:"minimum"`
	Reserved   [][2]any   `json:"reserved"`
	Commitment []string   `json:"commitment"`
}

type judgeAnswer struct {
	Txs        []judgeArtifact `json:"txs"`
	Names      []string        `json:"names"`
	Spaced     []judgeSpaced   `json:"spaced"`
	Minimum    []string        `json:"minimum"`
	Reserved   []string        `json:"reserved"`
	Commitment []string        `json:"commitment"`
}

// askJudge runs the judge. Outside CI a missing node or module skips the
// test; under CI=true it fails.
func askJudge(t *testing.T, q judgeQuery) judgeAnswer {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format+": run `make deps`", args...)
		}
		t.Skipf(format+": run `make deps`", args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	pkg := filepath.Join(filepath.Dir(judgeScript), "node_modules", "@ordjs", "runestone", "package.json")
	if _, err := os.Stat(pkg); err != nil {
		missing("@ordjs/runestone is missing (%v)", err)
	}
	in, _ := json.Marshal(q)
	cmd := exec.Command(node, judgeScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v: %s", judgeScript, err, stderr.String())
	}
	var a judgeAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("judge answered %.200q: %v", out, err)
	}
	return a
}

func sp[T any](v T) *string {
	s := toString(v)
	return &s
}

func toString(v any) string {
	switch x := v.(type) {
	case U128:
		return x.String()
	case uint64:
		return strconv.FormatUint(x, 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case uint8:
		return strconv.Itoa(int(x))
	case string:
		return x
	}
	panic("toString")
}

func opt[T any](p *T) *string {
	if p == nil {
		return nil
	}
	return sp(*p)
}

// judged is our artifact in the judge's shape.
func judged(a *Artifact) judgeArtifact {
	switch {
	case a == nil:
		return judgeArtifact{Kind: "none"}
	case a.Cenotaph != nil:
		return judgeArtifact{Kind: "cenotaph", Flaw: a.Cenotaph.Flaw.String()}
	}
	r := a.Runestone
	j := &judgeRunestone{Edicts: []judgeEdict{}, Pointer: opt(r.Pointer)}
	for _, e := range r.Edicts {
		j.Edicts = append(j.Edicts, judgeEdict{ID: e.ID.String(), Amount: e.Amount.String(), Output: toString(e.Output)})
	}
	if r.Mint != nil {
		j.Mint = sp(r.Mint.String())
	}
	if e := r.Etching; e != nil {
		je := &judgeEtching{Divisibility: opt(e.Divisibility), Premine: opt(e.Premine), Spacers: opt(e.Spacers), Turbo: e.Turbo}
		if e.Rune != nil {
			je.Rune = sp(e.Rune.String())
		}
		if e.Symbol != nil {
			je.Symbol = sp(string(*e.Symbol))
		}
		if t := e.Terms; t != nil {
			je.Terms = &judgeTerms{Amount: opt(t.Amount), Cap: opt(t.Cap), HeightStart: opt(t.HeightStart),
				HeightEnd: opt(t.HeightEnd), OffsetStart: opt(t.OffsetStart), OffsetEnd: opt(t.OffsetEnd)}
		}
		j.Etching = je
	}
	return judgeArtifact{Kind: "runestone", Runestone: j}
}

// TestJudgeDecipher decodes crafted and random runestones, valid and
// malformed, with our decoder and the judge, and wants the same answers.
func TestJudgeDecipher(t *testing.T) {
	txs := judgeCases()
	a := askJudge(t, judgeQuery{Txs: txs})
	if len(a.Txs) != len(txs) {
		t.Fatalf("judge answered %d txs, want %d", len(a.Txs), len(txs))
	}
	kinds := map[string]int{}
	flaws := map[string]int{}
	for i, outs := range txs {
		scripts := make([][]byte, len(outs))
		for k, h := range outs {
			scripts[k], _ = hex.DecodeString(h)
		}
		got := judged(Decipher(scripts))
		if !reflect.DeepEqual(got, a.Txs[i]) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(a.Txs[i])
			t.Errorf("tx %d %v:\n ours  %s\n judge %s", i, outs, g, w)
		}
		kinds[got.Kind]++
		flaws[got.Flaw]++
	}
	// the cases must reach every flaw and both kinds, or the test proves little
	for f := FlawEdictOutput; f <= FlawVarint; f++ {
		if flaws[f.String()] == 0 {
			t.Errorf("no case has flaw %s", f.ID())
		}
	}
	if kinds["runestone"] < 50 || kinds["none"] == 0 {
		t.Errorf("kinds covered: %v", kinds)
	}
	t.Logf("%d txs judged: %v; flaws %v", len(txs), kinds, flaws)
}

// TestJudgeNames checks names, spaced names, the unlock schedule, reserved
// names and commitments against the judge.
func TestJudgeNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 1))
	names := []U128{{}, U64(25), U64(26), U64(27), U64(2055900680524219742), steps[12], steps[26], MaxU128, {Hi: 1}}
	for range 50 {
		names = append(names, U128{Hi: rng.Uint64() >> rng.IntN(64), Lo: rng.Uint64()})
	}
	q := judgeQuery{Spaced: []string{"UNCOMMON•GOODS", "Z.Z.Z", "DOG•GO•TO•THE•MOON", "A", "AB•C"}}
	for _, n := range names {
		q.Names = append(q.Names, n.String())
		q.Commitment = append(q.Commitment, n.String())
	}
	nets := map[string]Network{"main": Mainnet, "test": Testnet3, "signet": Signet, "regtest": Regtest}
	heights := []uint32{0, 1, 839999, 840000, 840001, 857499, 857500, 1049999, 1050000, 2520000, 2600000}
	for range 40 {
		heights = append(heights, rng.Uint32N(2800000))
	}
	for net := range nets {
		for _, h := range heights {
			q.Minimum = append(q.Minimum, [2]any{net, h})
		}
	}
	q.Reserved = [][2]any{{0, 0}, {840000, 1}, {1 << 40, 0xffffffff}}
	a := askJudge(t, q)
	for i, n := range names {
		if got := Rune(n).String(); got != a.Names[i] {
			t.Errorf("name of %s: %s, judge %s", n, got, a.Names[i])
		}
		back, err := ParseRune(a.Names[i])
		if err != nil || back != Rune(n) {
			t.Errorf("ParseRune(%s) = %v, %v; want %s", a.Names[i], back, err, n)
		}
		if got := hex.EncodeToString(Rune(n).Commitment()); got != a.Commitment[i] {
			t.Errorf("commitment of %s: %s, judge %s", n, got, a.Commitment[i])
		}
	}
	for i, s := range q.Spaced {
		r, err := ParseSpacedRune(s)
		if err != nil || U128(r.Rune).String() != a.Spaced[i].Value || toString(r.Spacers) != a.Spaced[i].Spacers || r.String() != a.Spaced[i].Name {
			t.Errorf("spaced %s: %+v %v, judge %+v", s, r, err, a.Spaced[i])
		}
	}
	for i, m := range q.Minimum {
		got := U128(MinimumAtHeight(nets[m[0].(string)], m[1].(uint32))).String()
		if got != a.Minimum[i] {
			t.Errorf("minimum at %v: %s, judge %s", m, got, a.Minimum[i])
		}
	}
	for i, r := range q.Reserved {
		b, tx := uint64(toInt(r[0])), uint32(toInt(r[1]))
		if got := U128(ReservedRune(b, tx)).String(); got != a.Reserved[i] {
			t.Errorf("reserved %v: %s, judge %s", r, got, a.Reserved[i])
		}
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case uint32:
		return int64(x)
	}
	panic("toInt")
}
