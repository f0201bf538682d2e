package mempool

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// TestFlags checks mempool.space's classification bits on hand-built txs
// whose bits follow from its getTransactionFlags rules.
func TestFlags(t *testing.T) {
	p2wpkh := append([]byte{0x00, 0x14}, make([]byte, 20)...)
	p2tr := append([]byte{0x51, 0x20}, make([]byte, 32)...)
	p2pkh := append(append([]byte{0x76, 0xa9, 0x14}, make([]byte, 20)...), 0x88, 0xac)
	opReturn := []byte{0x6a, 0x01, 0x02}
	mk := func(version int32, ins, outs int, seq uint32, pk []byte, out func(i int) bchain.Vout) *Tx {
		tx := &Tx{Tx: &bchain.Tx{Version: version}}
		for i := range ins {
			tx.Vin = append(tx.Vin, bchain.Vin{Sequence: seq, Witness: [][]byte{{1}, {2}}})
			tx.Prevouts = append(tx.Prevouts, Prevout{Desc: pk, Value: uint64(1000 * (i + 1)), Known: true})
		}
		for i := range outs {
			tx.Vout = append(tx.Vout, out(i))
		}
		return tx
	}
	distinct := func(i int) bchain.Vout {
		s := append([]byte{0x00, 0x14}, make([]byte, 20)...)
		s[2] = byte(i + 1)
		return bchain.Vout{Value: uint64(500 + i), Script: s}
	}
	for _, c := range []struct {
		name string
		tx   *Tx
		want uint64
	}{
		{"v2 rbf p2wpkh → p2pkh + op_return", mk(2, 1, 2, 0xfffffffd, p2wpkh, func(i int) bchain.Vout {
			if i == 0 {
				return bchain.Vout{Value: 1, Script: p2pkh}
			}
			return bchain.Vout{Script: opReturn}
		}), FlagV2 | FlagRBF | FlagP2WPKH | FlagP2PKH | FlagOpReturn},
		{"v1 final consolidation", mk(1, 5, 1, 0xffffffff, p2wpkh, distinct), FlagV1 | FlagNoRBF | FlagP2WPKH | FlagConsolidation},
		{"v3 batch payout", mk(3, 1, 5, 0xfffffffe, p2tr, distinct), FlagV3 | FlagNoRBF | FlagP2TR | FlagP2WPKH | FlagBatchPayout},
		// 5 in, 5 out, equal amounts, no reuse: the coinjoin heuristic.
		{"coinjoin", mk(2, 5, 5, 0xfffffffd, nil, func(i int) bchain.Vout { v := distinct(i); v.Value = 777; return v }),
			FlagV2 | FlagRBF | FlagP2WPKH | FlagCoinjoin},
	} {
		if c.name == "coinjoin" {
			for i := range c.tx.Prevouts { // distinct input scripts, one amount
				s := append([]byte{0x00, 0x14}, make([]byte, 20)...)
				s[3] = byte(i + 1)
				c.tx.Prevouts[i] = Prevout{Desc: s, Value: 1000, Known: true}
			}
		}
		if got := c.tx.Flags(); got != c.want {
			t.Errorf("%s: flags %#x, want %#x", c.name, got, c.want)
		}
	}
	// A taproot key-path spend with an annex.
	tx := mk(2, 1, 1, 0xfffffffd, p2tr, distinct)
	tx.Vin[0].Witness = [][]byte{make([]byte, 64), {0x50, 1}}
	if got := tx.Flags(); got&FlagAnnex == 0 {
		t.Errorf("annex not flagged: %#x", got)
	}
}
