package bch

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// TestCashAddrVectors runs Bitcoin Cash Node's CashAddr vectors (every
// type and hash size, tokens-aware types included): each decodes to its
// payload and type and re-encodes to itself.
func TestCashAddrVectors(t *testing.T) {
	var vectors []struct {
		PayloadSize int    `json:"payloadSize"`
		Type        byte   `json:"type"`
		CashAddr    string `json:"cashaddr"`
		Payload     string `json:"payload"`
	}
	btctest.ReadJSON(t, "cashaddr_token_types.json", &vectors)
	if len(vectors) < 50 {
		t.Fatalf("%d vectors", len(vectors))
	}
	for _, v := range vectors {
		prefix, typ, hash, err := decodeCashAddr(v.CashAddr, "")
		if err != nil {
			t.Errorf("%s: %v", v.CashAddr, err)
			continue
		}
		if typ != v.Type || len(hash) != v.PayloadSize || !strings.EqualFold(hex.EncodeToString(hash), v.Payload) {
			t.Errorf("%s: type %d hash %x", v.CashAddr, typ, hash)
		}
		if got := encodeCashAddr(prefix, typ, hash); got != v.CashAddr {
			t.Errorf("re-encoded %s as %s", v.CashAddr, got)
		}
		upper := strings.ToUpper(v.CashAddr)
		if _, _, _, err := decodeCashAddr(upper, ""); err != nil {
			t.Errorf("upper case %s: %v", upper, err)
		}
		// One changed character must break the checksum.
		b := []byte(v.CashAddr)
		last := len(b) - 1
		b[last] = cashAlphabet[(strings.IndexByte(cashAlphabet, b[last])+1)%32]
		if _, _, _, err := decodeCashAddr(string(b), ""); err == nil {
			t.Errorf("corrupted %s accepted", b)
		}
	}
}

// TestAddresses checks the address forms the API accepts and shows, with
// the spec's legacy/CashAddr pairs and Blockbook's recorded addresses.
func TestAddresses(t *testing.T) {
	main := testParser(t, "Bcash", "cashaddr")
	mainLegacy := testParser(t, "Bcash", "legacy")
	test := testParser(t, "Bcash Testnet", "cashaddr")
	testLegacy := testParser(t, "Bcash Testnet", "legacy")
	xec := testParser(t, "ECash", "")
	xecLegacy := testParser(t, "ECash", "legacy")
	tests := []struct {
		p              *Parser
		display, other string // the configured form and an accepted alternative
		script         string
	}{
		// The CashAddr specification's examples.
		{main, "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu", "76a91476a04053bda0a88bda5177b86a15c3b29f55987388ac"},
		{main, "bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq", "3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC", "a91476a04053bda0a88bda5177b86a15c3b29f55987387"},
		{mainLegacy, "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu", "qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "76a91476a04053bda0a88bda5177b86a15c3b29f55987388ac"},
		// Blockbook's recorded pairs.
		{main, "bitcoincash:qqxgjelx8qk85t9xfk8g2zlunxmhxms6p55xarv2r5", "129HiRqekqPVucKy2M8zsqvafGgKypciPp", "76a9140c8967e6382c7a2ca64d8e850bfc99b7736e1a0d88ac"},
		{mainLegacy, "3EBEFWPtDYWCNszQ7etoqtWmmygccayLiH", "bitcoincash:pzy0wuj9pjps5v8dmlwq32fatu4wrgcwzuayq5nfhh", "a91488f772450c830a30eddfdc08a93d5f2ae1a30e1787"},
		{test, "bchtest:qp86jfla8084048rckpv85ht90falr050s03ejaesm", "mnnAKPTSrWjgoi3uEYaQkHA1QEC5btFeBr", "76a9144fa927fd3bcf57d4e3c582c3d2eb2bd3df8df47c88ac"},
		{testLegacy, "mnnAKPTSrWjgoi3uEYaQkHA1QEC5btFeBr", "BCHTEST:QP86JFLA8084048RCKPV85HT90FALR050S03EJAESM", "76a9144fa927fd3bcf57d4e3c582c3d2eb2bd3df8df47c88ac"},
		{xec, "ecash:qqxgjelx8qk85t9xfk8g2zlunxmhxms6p5dtfghs9r", "129HiRqekqPVucKy2M8zsqvafGgKypciPp", "76a9140c8967e6382c7a2ca64d8e850bfc99b7736e1a0d88ac"},
		{xec, "ecash:pzy0wuj9pjps5v8dmlwq32fatu4wrgcwzuyf5lgn3q", "pzy0wuj9pjps5v8dmlwq32fatu4wrgcwzuyf5lgn3q", "a91488f772450c830a30eddfdc08a93d5f2ae1a30e1787"},
		{xecLegacy, "3EBEFWPtDYWCNszQ7etoqtWmmygccayLiH", "ecash:pzy0wuj9pjps5v8dmlwq32fatu4wrgcwzuyf5lgn3q", "a91488f772450c830a30eddfdc08a93d5f2ae1a30e1787"},
		// P2PK is shown as its key's P2PKH (Blockbook's main-P2PK case).
		{main, "bitcoincash:qqr95pwp0w5jqnh9vcjl4qm4x45atr0er57n49pq75", "03db3c3977c5165058bf38c46f72d32f4e872112dbafc13083a948676165cd1603", "2103db3c3977c5165058bf38c46f72d32f4e872112dbafc13083a948676165cd1603ac"},
		// P2SH32 has no base58 form: CashAddr in either format.
		{mainLegacy, "bitcoincash:pvtgwvmtp4hy5k9alcwc5yt69k4jnshevdwapq43w7hp8m7hwj60ss0qjrjyz", "pvtgwvmtp4hy5k9alcwc5yt69k4jnshevdwapq43w7hp8m7hwj60ss0qjrjyz", "aa201687336b0d6e4a58bdfe1d8a117a2dab29c2f9635dd082b177ae13efd774b4f887"},
	}
	for _, tt := range tests {
		script, _ := hex.DecodeString(tt.script)
		addrs, searchable := tt.p.OutputAddresses(script)
		if len(addrs) != 1 || addrs[0] != tt.display || !searchable {
			t.Errorf("%s shown as %v (%v), want %s", tt.script, addrs, searchable, tt.display)
		}
		desc := tt.p.OutputAddrDesc(script)
		for _, a := range []string{tt.display, tt.other} {
			got, err := tt.p.AddrDescFromAddress(a)
			if err != nil || hex.EncodeToString(got) != hex.EncodeToString(desc) {
				t.Errorf("%s: %x %v, want %x", a, got, err, desc)
			}
		}
	}
	for _, tt := range []struct {
		p    *Parser
		addr string
	}{
		{main, "bchtest:qp86jfla8084048rckpv85ht90falr050s03ejaesm"},     // another network's prefix
		{main, "ecash:qqxgjelx8qk85t9xfk8g2zlunxmhxms6p5dtfghs9r"},       // eCash on Bitcoin Cash
		{xec, "bitcoincash:qqxgjelx8qk85t9xfk8g2zlunxmhxms6p55xarv2r5"},  // and back
		{main, "mnnAKPTSrWjgoi3uEYaQkHA1QEC5btFeBr"},                     // testnet base58
		{main, "bitcoincash:QQXGJELX8QK85T9XFK8G2ZLUNXMHXMS6P55XARV2R5"}, // mixed case
		{main, "bitcoincash:qqxgjelx8qk85t9xfk8g2zlunxmhxms6p55xarv2r6"}, // checksum
		{main, "bitcoincash:"},
		{main, ":"},
		{main, "qq"},
		{main, strings.Repeat("q", 200)},
		{main, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
	} {
		if _, err := tt.p.AddrDescFromAddress(tt.addr); !errors.Is(err, bchain.ErrInvalidAddress) {
			t.Errorf("%q: %v", tt.addr, err)
		}
	}
	// Scripts without an address form show none (and OP_RETURN its data).
	for script, want := range map[string]string{
		"0014751e76e8199196d454941c45d1b3a323f1433bd6": "", // P2WPKH means nothing here
		"51":           "",
		"6a0461686f6a": "OP_RETURN (ahoj)",
	} {
		s, _ := hex.DecodeString(script)
		addrs, searchable := main.OutputAddresses(s)
		if searchable || (want == "" && len(addrs) != 0) || (want != "" && (len(addrs) != 1 || addrs[0] != want)) {
			t.Errorf("%s: %v %v", script, addrs, searchable)
		}
	}
}
