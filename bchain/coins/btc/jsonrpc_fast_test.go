package btc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// genericHex decodes a response the slow, general way.
func genericHex(data []byte) ([]byte, bool) {
	var res rpcResponse
	if json.Unmarshal(data, &res) != nil || res.Error != nil || res.Result == nil {
		return nil, false
	}
	var h hexBytes
	if json.Unmarshal(res.Result, &h) != nil {
		return nil, false
	}
	return h, true
}

func TestFastHexResult(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"result":"00ff10","error":null,"id":1}`, true},
		{`{"jsonrpc":"1.0","result":"abcd","error":null,"id":7}`, true},
		{`{"result":"","error":null,"id":1}`, true},
		{`{"result":"0","error":null,"id":1}`, false},
		{`{"result":"zz","error":null,"id":1}`, false},
		{`{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}`, false},
		{`{"result":"00","error":{"code":-1,"message":"x"},"id":1}`, false},
		{`{"result":"00"`, false},
		{`<html>"result":"00"</html>`, false},
	} {
		got, ok := fastHexResult([]byte(c.body))
		if ok != c.ok {
			t.Errorf("%s: ok %v", c.body, ok)
		}
		if want, wok := genericHex([]byte(c.body)); ok && (!wok || !bytes.Equal(got, want)) {
			t.Errorf("%s: fast %x, generic %x %v", c.body, got, want, wok)
		}
	}
}

// Whatever the fast path accepts, the generic decoder decodes identically.
func FuzzFastHexResult(f *testing.F) {
	f.Add([]byte(`{"result":"00ff","error":null,"id":1}`))
	f.Add([]byte(`{"error":null,"result":"0a0b","id":2,"jsonrpc":"1.0"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := fastHexResult(data)
		if !ok {
			return
		}
		want, wok := genericHex(data)
		if !wok || !bytes.Equal(got, want) {
			t.Fatalf("fast path accepted %q as %x; generic: %x %v", data, got, want, wok)
		}
	})
}
