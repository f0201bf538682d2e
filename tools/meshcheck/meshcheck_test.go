package meshcheck

import (
	"strings"
	"testing"
)

// The judge must be able to fail: unknown fields, missing required ones,
// wrong types and statuses the standard does not use are refused.
func TestCheckerRefuses(t *testing.T) {
	k, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(k.Endpoints()); n != 20 {
		t.Errorf("%d endpoints, the 1.5.1 specification has 20", n)
	}
	good := `{"network_identifiers":[{"blockchain":"Bitcoin","network":"regtest"}]}`
	if err := k.Check("/network/list", 200, []byte(good)); err != nil {
		t.Fatalf("valid answer refused: %v", err)
	}
	for name, c := range map[string]struct {
		path   string
		status int
		body   string
		want   string
	}{
		"unknown field":    {"/network/list", 200, `{"network_identifiers":[{"blockchain":"B","network":"r","extra":1}]}`, "extra"},
		"nested unknown":   {"/account/balance", 200, `{"block_identifier":{"index":1,"hash":"h","x":0},"balances":[]}`, "x"},
		"missing required": {"/network/list", 200, `{"network_identifiers":[{"blockchain":"B"}]}`, "network"},
		"wrong type":       {"/account/balance", 200, `{"block_identifier":{"index":"1","hash":"h"},"balances":[]}`, "index"},
		"error shape":      {"/block", 500, `{"code":1,"message":"m"}`, "retriable"},
		"status 400":       {"/block", 400, `{"code":1,"message":"m","retriable":false}`, "status 400"},
		"unknown path":     {"/nosuch", 200, `{}`, "no such path"},
	} {
		err := k.Check(c.path, c.status, []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", name, err, c.want)
		}
	}
	// Metadata objects are free-form in the standard and stay so.
	if err := k.Check("/network/list", 200, []byte(`{"network_identifiers":[{"blockchain":"B","network":"r","sub_network_identifier":{"network":"s","metadata":{"any":1}}}]}`)); err != nil {
		t.Errorf("metadata refused: %v", err)
	}
}
