package calldata

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The ABIs (JSON, functions only) of the standard contracts whose calls
// decode without the 4-byte directory: ERC-20 (with EIP-2612's permit
// and OpenZeppelin's allowance helpers), ERC-721, ERC-1155, ERC-4626 and
// WETH's deposit and withdraw.
//
//go:embed abi/*.json
var abiFS embed.FS

type abiParam struct {
	Type       string     `json:"type"`
	Components []abiParam `json:"components"`
}

type abiEntry struct {
	Type   string     `json:"type"`
	Name   string     `json:"name"`
	Inputs []abiParam `json:"inputs"`
}

// canonical spells an ABI parameter's type as text signatures do: a
// tuple as its components' types in parentheses, then any array suffix.
func (p abiParam) canonical() string {
	rest, ok := strings.CutPrefix(p.Type, "tuple")
	if !ok {
		return p.Type
	}
	parts := make([]string, len(p.Components))
	for i, c := range p.Components {
		parts[i] = c.canonical()
	}
	return "(" + strings.Join(parts, ",") + ")" + rest
}

// SignaturesFromABI lists the function signatures of a contract ABI
// (JSON), sorted by text, without duplicates.
func SignaturesFromABI(raw []byte) ([]Signature, error) {
	var entries []abiEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("calldata: ABI: %w", err)
	}
	var out []Signature
	for _, e := range entries {
		if e.Type != "function" {
			continue
		}
		s := Signature{Name: e.Name}
		for _, in := range e.Inputs {
			s.Params = append(s.Params, in.canonical())
		}
		if _, err := ParseSignature(s.Text()); err != nil {
			return nil, fmt.Errorf("calldata: ABI function %s: %w", e.Name, err)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Signature) int { return strings.Compare(a.Text(), b.Text()) })
	return slices.CompactFunc(out, func(a, b Signature) bool { return a.Text() == b.Text() }), nil
}

var (
	standardOnce sync.Once
	standard     []Signature
	standardErr  error
)

// Standard returns the signatures of the embedded standard ABIs, sorted by
// text; no two share a selector (the index keeps one standard signature
// per selector).
func Standard() ([]Signature, error) {
	standardOnce.Do(func() { standard, standardErr = loadStandard() })
	return standard, standardErr
}

func loadStandard() ([]Signature, error) {
	files, err := abiFS.ReadDir("abi")
	if err != nil {
		return nil, err
	}
	var all []Signature
	for _, f := range files {
		raw, err := abiFS.ReadFile("abi/" + f.Name())
		if err != nil {
			return nil, err
		}
		sigs, err := SignaturesFromABI(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		all = append(all, sigs...)
	}
	slices.SortFunc(all, func(a, b Signature) int { return strings.Compare(a.Text(), b.Text()) })
	all = slices.CompactFunc(all, func(a, b Signature) bool { return a.Text() == b.Text() })
	seen := map[uint32]string{}
	for _, s := range all {
		sel := Selector(s.Text())
		if other, ok := seen[sel]; ok {
			return nil, fmt.Errorf("calldata: standard signatures %s and %s share selector %08x", other, s.Text(), sel)
		}
		seen[sel] = s.Text()
	}
	return all, nil
}
