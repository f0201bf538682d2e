package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
)

// ordGet reads an ord route as JSON (numbers kept exact), requiring want.
func ordGet(t *testing.T, url string, want int) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", url, resp.StatusCode, want, body)
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var out map[string]any
	if err := d.Decode(&out); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
	if want != 200 && out["error"] == "" {
		t.Fatalf("GET %s: no error text: %s", url, body)
	}
	return out
}

func num(v any) string {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	return fmt.Sprint(v)
}

// decimal1 writes atomic units of a divisibility-1 rune as ord does.
func decimal1(v uint64) string {
	if v%10 == 0 {
		return fmt.Sprint(v / 10)
	}
	return fmt.Sprintf("%d.%d", v/10, v%10)
}

// checkOrd: ord's JSON routes on -ord against the ledger: the rune by id,
// name and number, the runes list, outputs spent and unspent, addresses.
func (r *runesAnswers) checkOrd(base string, ledger runesLedger, rid string, etch, tr *wire.MsgTx) {
	t := r.t
	t.Helper()
	var info api.RuneInfo
	getJSON(t, r.base+"/api/v2/rune/"+rid, 200, &info)
	for _, q := range []string{rid, info.Name, info.SpacedName, "0"} {
		got := ordGet(t, base+"/rune/"+q, 200)
		e, _ := got["entry"].(map[string]any)
		terms, _ := e["terms"].(map[string]any)
		if got["id"] != rid || got["mintable"] != false || e == nil || terms == nil || e["spaced_rune"] != info.SpacedName ||
			num(e["premine"]) != "1000" || num(e["mints"]) != "2" || num(e["burned"]) != "10" || num(e["divisibility"]) != "1" ||
			e["symbol"] != "R" || e["etching"] != etch.TxHash().String() || num(terms["amount"]) != "10" || num(terms["cap"]) != "2" {
			t.Errorf("ord /rune/%s: %v", q, got)
		}
	}
	list := ordGet(t, base+"/runes", 200)
	entries, _ := list["entries"].([]any)
	if len(entries) != 1 || list["more"] != false || list["prev"] != nil || list["next"] != nil {
		t.Fatalf("ord /runes: %v", list)
	}
	if pair, _ := entries[0].([]any); len(pair) != 2 || pair[0] != rid {
		t.Errorf("ord /runes entry: %v", entries[0])
	}
	out := ordGet(t, base+"/output/"+tr.TxHash().String()+":2", 200)
	pile, _ := out["runes"].(map[string]any)[info.SpacedName].(map[string]any)
	if out["spent"] != false || out["address"] != r.addrs[3] || num(out["value"]) != "3000" || pile == nil || num(pile["amount"]) != "300" {
		t.Errorf("ord /output of the transfer's edict: %v", out)
	}
	spent := ordGet(t, base+"/output/"+etch.TxHash().String()+":0", 200)
	if spent["spent"] != true || len(spent["runes"].(map[string]any)) != 0 {
		t.Errorf("ord /output of the spent etching output: %v", spent)
	}
	for _, bad := range []struct {
		path string
		code int
	}{{"/output/zz", 400}, {"/output/" + strings.Repeat("0", 64) + ":0", 404}, {"/rune/A%E2%80%A2%E2%80%A2B", 400},
		{"/rune/999999:9", 404}, {"/runes/x", 400}, {"/address/nope", 400}, {"/inscriptions", 404}} {
		ordGet(t, base+bad.path, bad.code)
	}
	r.checkOrdAddresses(base, ledger)
}

// checkOrdAddresses: each address's runes_balances equal the ledger, and
// its outputs its confirmed UTXOs.
func (r *runesAnswers) checkOrdAddresses(base string, ledger runesLedger) {
	t := r.t
	t.Helper()
	for _, a := range r.addrs {
		got := ordGet(t, base+"/address/"+a, 200)
		have := map[string]string{}
		for _, b := range got["runes_balances"].([]any) {
			tri := b.([]any)
			have[tri[0].(string)] = tri[1].(string)
		}
		want := map[string]string{}
		for id, v := range ledger[a] {
			var info api.RuneInfo
			getJSON(t, r.base+"/api/v2/rune/"+id, 200, &info)
			want[info.SpacedName] = decimal1(v)
		}
		if !maps.Equal(have, want) {
			t.Errorf("ord /address/%s runes %v, ledger %v", a, have, want)
		}
		var us []api.Utxo
		getJSON(t, r.base+"/api/v2/utxo/"+a+"?confirmed=true", 200, &us)
		var outs, wantOuts []string
		for _, o := range got["outputs"].([]any) {
			outs = append(outs, o.(string))
		}
		for _, u := range us {
			wantOuts = append(wantOuts, fmt.Sprintf("%s:%d", u.Txid, u.Vout))
		}
		slices.Sort(wantOuts)
		if !slices.Equal(outs, wantOuts) {
			t.Errorf("ord /address/%s outputs %v, UTXOs %v", a, outs, wantOuts)
		}
	}
}
