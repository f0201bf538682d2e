package e2e

// Decoded calls (ethereumSpecific.parsedData): the scenario's contract
// calls, decoded through the standard ABIs (its ERC-20/721/1155 calls) and
// through signatures the 4-byte downloader fetched from a double of the
// directory (its other calls), must show the arguments the scenario sent,
// as go-ethereum's ABI decoder reads them from the node's tx.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain/calldata"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/fourbytedir"
)

// startFourByteDirectory serves, as the 4-byte directory would, the
// signatures of the scenario contracts' functions that no standard ABI
// has (so that the standard ones decode only through the built-in ABIs),
// three to a page; it returns the fourByteSignatures URL.
func startFourByteDirectory(t *testing.T) string {
	t.Helper()
	std, err := calldata.Standard()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range std {
		known[s.Text()] = true
	}
	var texts []string
	for _, name := range ethgen.ContractNames() {
		for _, m := range ethgen.MustContract(name).ABI.Methods {
			if !known[m.Sig] && !slices.Contains(texts, m.Sig) {
				texts = append(texts, m.Sig)
			}
		}
	}
	slices.Sort(texts)
	dir := fourbytedir.New(3)
	t.Cleanup(dir.Close)
	dir.Add(texts...)
	return dir.URL()
}

// scenarioMethod finds the scenario contracts' function of a selector.
func scenarioMethod(sel []byte) *abi.Method {
	for _, name := range ethgen.ContractNames() {
		if m, err := ethgen.MustContract(name).ABI.MethodById(sel); err == nil {
			return m
		}
	}
	return nil
}

// abiValues renders values go-ethereum unpacked as parsedData shows them.
func abiValues(v reflect.Value) []string {
	switch x := v.Interface().(type) {
	case *big.Int:
		return []string{x.String()}
	case common.Address:
		return []string{x.Hex()}
	case []byte:
		if len(x) == 0 {
			return []string{""}
		}
		return []string{"0x" + hex.EncodeToString(x)}
	case string:
		return []string{x}
	case bool:
		return []string{fmt.Sprint(x)}
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Array {
			b := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
			return []string{"0x" + hex.EncodeToString(b)}
		}
		var out []string
		for i := range v.Len() {
			out = append(out, abiValues(v.Index(i))...)
		}
		return out
	}
	return []string{fmt.Sprint(v.Interface())}
}

// wantParsedData is what a tx with input data must show.
func wantParsedData(t *testing.T, data []byte) *api.EthereumParsedInputData {
	t.Helper()
	if len(data) == 0 {
		return &api.EthereumParsedInputData{Name: "Transfer"}
	}
	out := &api.EthereumParsedInputData{MethodID: "0x" + hex.EncodeToString(data[:4])}
	m := scenarioMethod(data[:4])
	if m == nil { // a creation's code
		return out
	}
	vals, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		t.Fatalf("%s: %v", m.Sig, err)
	}
	var types []string
	for i, in := range m.Inputs {
		types = append(types, in.Type.String())
		out.Params = append(out.Params, api.EthereumParsedInputParam{Type: in.Type.String(), Values: abiValues(reflect.ValueOf(vals[i]))})
	}
	out.Name, out.Function = calldata.DisplayName(m.RawName), m.RawName+"("+strings.Join(types, ", ")+")"
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// waitFourByte returns what each of the ledger's txs must show as
// parsedData and its mintBatch call, once the stack's downloader has
// stored the directory (that call, a signature only the directory has,
// decodes).
func (e *ethE2E) waitFourByte(t *testing.T) (map[common.Hash]*api.EthereumParsedInputData, common.Hash) {
	t.Helper()
	ctx := context.Background()
	want := map[common.Hash]*api.EthereumParsedInputData{}
	var batch common.Hash
	for h := range e.ledger.Txs {
		tx, _, err := e.dev.Client().TransactionByHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		want[h] = wantParsedData(t, tx.Data())
		if want[h].Function == "mintBatch(address, uint256[], uint256[])" {
			batch = h
		}
	}
	if batch == (common.Hash{}) {
		t.Fatal("the scenario has no mintBatch call")
	}
	for deadline := time.Now().Add(waitFor); ; time.Sleep(50 * time.Millisecond) {
		var got api.Tx
		e.get(t, "/api/v2/tx/"+batch.Hex(), &got)
		if jsonOf(got.EthereumSpecific.ParsedData) == jsonOf(want[batch]) {
			return want, batch
		}
		if time.Now().After(deadline) {
			t.Fatalf("mintBatch's parsedData %s, want %s\n%s", jsonOf(got.EthereumSpecific.ParsedData), jsonOf(want[batch]), e.inst.logs)
		}
	}
}

func (e *ethE2E) checkParsedData(t *testing.T) {
	t.Helper()
	start := time.Now()
	want, batch := e.waitFourByte(t)
	kinds := map[string]int{}
	for h, w := range want {
		var got api.Tx
		e.get(t, "/api/v2/tx/"+h.Hex(), &got)
		if g := jsonOf(got.EthereumSpecific.ParsedData); g != jsonOf(w) {
			t.Errorf("tx %s: parsedData %s, want %s", h.Hex(), g, jsonOf(w))
		}
		name, _, _ := strings.Cut(w.Function, "(")
		kinds[name]++
	}
	for _, f := range []string{"", "transfer", "safeBatchTransferFrom", "safeTransferFrom", "split", "mint", "mintBatch"} {
		if kinds[f] == 0 {
			t.Errorf("the scenario has no call of %q: %v", f, kinds)
		}
	}
	// The websocket's getTransaction and an address's page of txs show the
	// same.
	ws := newWS(t, e.inst.base)
	var wtx api.Tx
	ws.ok("getTransaction", map[string]any{"txid": batch.Hex()}, &wtx)
	if g := jsonOf(wtx.EthereumSpecific.ParsedData); g != jsonOf(want[batch]) {
		t.Errorf("ws getTransaction parsedData %s", g)
	}
	holder := *e.ledger.Txs[batch].To
	for _, a := range e.ledger.SortedAddresses() {
		if len(e.ledger.Addresses[a].Txs) > 3 {
			holder = a
			break
		}
	}
	var page api.Address
	e.get(t, "/api/v2/address/"+holder.Hex()+"?details=txs&pageSize=50", &page)
	var info api.Address
	ws.ok("getAccountInfo", map[string]any{"descriptor": holder.Hex(), "details": "txs", "pageSize": 50}, &info)
	if len(page.Transactions) < 3 || len(info.Transactions) != len(page.Transactions) {
		t.Fatalf("%s: %d txs, %d over the websocket", holder.Hex(), len(page.Transactions), len(info.Transactions))
	}
	for i, tx := range page.Transactions {
		w := want[common.HexToHash(tx.Txid)]
		if g := jsonOf(tx.EthereumSpecific.ParsedData); w == nil || g != jsonOf(w) || g != jsonOf(info.Transactions[i].EthereumSpecific.ParsedData) {
			t.Errorf("%s's page, tx %s: parsedData %s (ws %s), want %s", holder.Hex(), tx.Txid, g, jsonOf(info.Transactions[i].EthereumSpecific.ParsedData), jsonOf(w))
		}
	}
	// The explorer's tx page names the call above its input data.
	p := fetchPage(t, e.inst.base, "/tx/"+batch.Hex())
	if fn := p.textOf(t, "tx-function"); !strings.Contains(fn, "Mint Batch") || !strings.Contains(fn, want[batch].Function) {
		t.Errorf("tx page of %s: decoded call %q", batch.Hex(), fn)
	}
	t.Logf("the parsedData checks took %v", time.Since(start).Round(time.Millisecond))
}
