package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/scalegen"
)

// scaleTargets picks issue 46's addresses on the scale chain: the
// busiest is whale 0 (the most txs); the UTXO whale is the whale with
// the most unspent outputs, and the other UTXO list the address's whose
// count is nearest utxoTarget, both found by one scan of the index's
// addressUtxos rows (sorted by descriptor, so each address's outputs are
// a run: scanUtxoCounts). It prints the whales' tx and UTXO counts.
func scaleTargets(open opener, parser *btc.Parser, st scaleStats) (issueTargets, error) {
	var t issueTargets
	var whales [scalegen.NumWhales]bchain.AddrDesc
	var names [scalegen.NumWhales]string
	for w := range whales {
		whales[w] = parser.OutputAddrDesc(scalegen.WhaleScript(w))
		a, _, err := parser.AddressesFromAddrDesc(whales[w])
		if err != nil || len(a) == 0 {
			return t, fmt.Errorf("address of whale %d: %v", w, err)
		}
		names[w] = a[0]
	}
	d, srv, err := open()
	if err != nil {
		return t, err
	}
	srv.Close()
	start := time.Now()
	c, err := scanUtxoCounts(d, parser, whales)
	d.Close()
	if err != nil {
		return t, err
	}
	utxos, near, most, rows := c.whales, c.near, c.most, c.rows
	fmt.Printf("addressUtxos scanned in %.1f s: %d unspent outputs\n", time.Since(start).Seconds(), rows)
	top := 0
	for w := range whales {
		txs, err := txCount(open, "/api/v2/address/"+names[w])
		if err != nil {
			return t, err
		}
		fmt.Printf("whale %d %s: %d txs (stats.json: %d), %d UTXOs\n", w, names[w], txs, st.WhaleTxs[w], utxos[w])
		if utxos[w] > utxos[top] {
			top = w
		}
	}
	a, _, err := parser.AddressesFromAddrDesc(near.desc)
	b, _, err2 := parser.AddressesFromAddrDesc(most.desc)
	if err != nil || err2 != nil || len(a) == 0 || len(b) == 0 {
		return t, fmt.Errorf("address of descriptor %x or %x: %v", near.desc, most.desc, errors.Join(err, err2))
	}
	fmt.Printf("address with UTXOs nearest %d: %s, %d UTXOs; with the most UTXOs: %s, %d\n", utxoTarget, a[0], near.txs, b[0], most.txs)
	t.busiest, t.near, t.nearUtxos = names[0], a[0], near.txs
	t.utxoWhale, t.utxoBound = names[top], utxoBound(open, whales[top])
	t.utxoName = fmt.Sprintf("utxo of whale %d (%d UTXOs)", top, utxos[top])
	// The whales spend their outputs; the chain's largest UTXO list is
	// another address's, timed too.
	t.extra = []query{{Name: fmt.Sprintf("utxo of the address with the most (%d)", most.txs), Paths: []string{"/api/v2/utxo/" + b[0]}, Bound: utxoBound(open, most.desc)}}
	return t, nil
}

// named reports whether desc has an address.
func named(parser *btc.Parser, desc bchain.AddrDesc) bool {
	a, _, err := parser.AddressesFromAddrDesc(desc)
	return err == nil && len(a) > 0
}

// utxoCounts is what scanUtxoCounts finds.
type utxoCounts struct {
	whales     [scalegen.NumWhales]int // the whales' UTXO counts
	near, most busiest                 // nearest utxoTarget; the most (addresses with a name only)
	rows       int
}

// scanUtxoCounts counts the unspent outputs of every descriptor in one
// scan of the addressUtxos rows (sorted by descriptor: each one's outputs
// are a run).
func scanUtxoCounts(d *db.DB, parser *btc.Parser, whales [scalegen.NumWhales]bchain.AddrDesc) (utxoCounts, error) {
	var c utxoCounts
	var cur []byte
	n := 0
	end := func() {
		for w := range whales {
			if bytes.Equal(cur, whales[w]) {
				c.whales[w] = n
			}
		}
		// Only a descriptor with an address can be asked about (a P2PK
		// output's has none).
		if b := closer(c.near, cur, n); b.txs != c.near.txs || !bytes.Equal(b.desc, c.near.desc) {
			if named(parser, cur) {
				c.near = b
			}
		}
		if n > c.most.txs && named(parser, cur) {
			c.most = busiest{desc: bytes.Clone(cur), txs: n}
		}
	}
	err := db.Iterate(d, db.CFAddressUtxos, nil, nil, func(k, _ []byte) (bool, error) {
		l, m := binary.Uvarint(k)
		if m <= 0 || uint64(len(k)-m) < l {
			return false, fmt.Errorf("addressUtxos key %x: bad descriptor length", k)
		}
		desc := k[m : m+int(l)]
		if c.rows > 0 && !bytes.Equal(desc, cur) {
			end()
			n = 0
		}
		if n == 0 {
			cur = append(cur[:0], desc...)
		}
		n++
		c.rows++
		return true, nil
	})
	if err == nil && c.rows > 0 {
		end()
	}
	return c, err
}
