package openapicheck

import (
	"strings"
	"testing"
)

const testSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /api/v2/tx/{txid}:
    parameters: [{name: txid, in: path, required: true, schema: {type: string}}]
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                additionalProperties: false
                required: [txid]
                properties:
                  txid: {type: string}
                  size: {type: integer}
  /api/v2/tx-specific/{txid}:
    parameters: [{name: txid, in: path, required: true, schema: {type: string}}]
    get:
      responses: {"200": {description: ok}}
  /api/v2/xpub/{xpub}:
    parameters: [{name: xpub, in: path, required: true, schema: {type: string}}]
    get:
      responses: {"200": {description: ok}}
`

func TestMatch(t *testing.T) {
	c, err := New([]byte(testSpec))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/api/v2/tx/ab":          "/api/v2/tx/{txid}",
		"/api/v2/tx-specific/ab": "/api/v2/tx-specific/{txid}",
		"/api/v2/xpub/wpkh%28%5Bd%2F84%27%2F1%27%2F0%27%5Dtpub%2F0%2F%2A%29": "/api/v2/xpub/{xpub}",
		"/api/v2/xpub/wpkh([d/84'/1'/0']tpub/0/*)":                           "",
		"/api/v2/tx/":      "",
		"/api/v2/tx/ab/cd": "",
		"/api/v2/nosuch":   "",
	} {
		op, ok := c.Match("GET", path)
		if ok != (want != "") || op.Path != want {
			t.Errorf("Match(%s) = %v %v, want %q", path, op, ok, want)
		}
	}
	if _, ok := c.Match("POST", "/api/v2/tx/ab"); ok {
		t.Error("POST matched a GET operation")
	}
}

func TestCheckAnswer(t *testing.T) {
	c, err := New([]byte(testSpec))
	if err != nil {
		t.Fatal(err)
	}
	op := Op{"GET", "/api/v2/tx/{txid}"}
	for body, want := range map[string]string{
		`{"txid":"ab","size":3}`:                   "",
		`{"txid":"ab","extra":1}`:                  `"extra" is unsupported`,
		`{"size":3}`:                               `"txid" is missing`,
		`{"txid":"ab","size":"3"}`:                 "/size: value must be an integer",
		`{"txid":"ab","size":1152921504606846976}`: "too large",
		`nope`: "not JSON",
	} {
		err := c.CheckAnswer(op, 200, []byte(body))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	if err := c.CheckAnswer(op, 400, []byte(`{}`)); err == nil {
		t.Error("an undescribed status passed")
	}
}
