package api

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/calldata"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
)

// parsedData comes from the signatures the index holds: the standard
// ABIs' without any download, a signature stored later from the next
// request on, and Blockbook's answers for no data and short data.
func TestParsedDataFromTheIndex(t *testing.T) {
	d, err := memdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainEthereumType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.WriteStandardSignatures(); err != nil {
		t.Fatal(err)
	}
	s := NewEthService(d, &bchain.Backend{Addresses: hexAddrs{}}, nil, Config{})
	parsed := func(data string) string {
		t.Helper()
		v, err := s.newView()
		if err != nil {
			t.Fatal(err)
		}
		defer v.release()
		raw, _ := hex.DecodeString(data)
		to := bchain.EthAddress{0xaa}
		out, err := newEthRenderer(s, v).render(&bchain.EthTx{To: &to, Data: raw}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(out.EthereumSpecific.ParsedData)
		return string(b)
	}
	word := func(s string) string { return strings.Repeat("0", 64-len(s)) + s }
	transfer := "a9059cbb" + word("11"+strings.Repeat("22", 19)) + word("3e8")
	const frobnicate = "frobnicate(uint8)"
	frob := fmt.Sprintf("%08x", calldata.Selector(frobnicate))
	for data, want := range map[string]string{
		transfer: `{"methodId":"0xa9059cbb","name":"Transfer","function":"transfer(address, uint256)","params":[` +
			`{"type":"address","values":["0x11` + strings.Repeat("22", 19) + `"]},{"type":"uint256","values":["1000"]}]}`,
		"":               `{"methodId":"","name":"Transfer"}`,
		"a9059c":         `null`,
		frob + word("7"): `{"methodId":"0x` + frob + `","name":""}`,
	} {
		if got := parsed(data); got != want {
			t.Errorf("%s:\n got %s\nwant %s", data, got, want)
		}
	}
	if err := d.WriteSignatures([]db.SignatureRow{{Selector: calldata.Selector(frobnicate), ID: 5, Text: frobnicate}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := parsed(frob+word("7")), `{"methodId":"0x`+frob+`","name":"Frobnicate","function":"frobnicate(uint8)","params":[{"type":"uint8","values":["7"]}]}`; got != want {
		t.Errorf("after the download:\n got %s\nwant %s", got, want)
	}
}
