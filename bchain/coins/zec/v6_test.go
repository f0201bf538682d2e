package zec

import (
	"encoding/hex"
	"testing"

	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// TestV6TxHashVectors checks v6 (NU6.3) decoding and txids against the
// Zcash test vectors: txid, and the Sapling, Orchard and Ironwood digests.
// The vectors carry a placeholder version group id (ffffffff), which the
// txid hashes as serialized, so they are decoded past the group check.
func TestV6TxHashVectors(t *testing.T) {
	var rows [][]any
	btctest.ReadJSON(t, "zcash-v6-tx-hash.json", &rows)
	for _, row := range rows[2:] {
		name, txHex := row[0].(string), row[1].(string)
		raw, err := hex.DecodeString(txHex)
		if err != nil {
			t.Fatal(err)
		}
		r := &reader{b: raw}
		z := &ztx{header: r.u32(), groupID: r.u32()}
		z.overwintered, z.version = z.header>>31 == 1, int32(z.header&0x7fffffff)
		if z.version != 6 {
			t.Fatalf("%s: version %d", name, z.version)
		}
		decodeV5(r, z)
		if r.err != nil || r.off != len(raw) {
			t.Fatalf("%s: decoded %d of %d bytes: %v", name, r.off, len(raw), r.err)
		}
		z.size = r.off
		id := z.txid(raw)
		got := []string{hex.EncodeToString(id[:]), hex.EncodeToString(z.saplingDigest()),
			hex.EncodeToString(actionsDigest(&z.orchard, orchardV6)), hex.EncodeToString(actionsDigest(&z.ironwood, ironwoodV6))}
		for i, what := range []string{"txid", "sapling digest", "orchard digest", "ironwood digest"} {
			if got[i] != row[2+i].(string) {
				t.Errorf("%s: %s %s, vector %s", name, what, got[i], row[2+i])
			}
		}
		if _, ok := z.valueBalance(); !ok {
			t.Errorf("%s: value balance overflows", name)
		}
	}
	// With the real group id the same bytes go through decodeTx.
	raw, _ := hex.DecodeString("0600008098b684d8ffffffff51ce52e85c0e5f0f000000000000")
	if z, err := decodeTx(raw); err != nil || z.size != len(raw) {
		t.Errorf("v6 with NU6.3's group id: %v", err)
	}
}
