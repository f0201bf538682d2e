package db

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"

	"github.com/openexplorer/blockbook/bchain"
)

// expectedFilterScripts replays the synthetic chain and returns, per block,
// the scripts its filter must hold: the outputs each tx spends and pays
// (descriptors as testClassifier files them), restricted to the selection,
// without inscription reveals that touch a selected script and the txs they
// spend. It shares no code with the index or the filter builder.
func expectedFilterScripts(blocks []*bchain.Block, p FilterParams) [][][]byte {
	type outKey struct {
		txid bchain.Hash
		vout uint32
	}
	outs := map[outKey][]byte{}
	selected := func(s []byte) bool {
		if len(s) == 0 {
			return false
		}
		return p.Scripts == FilterScriptsAll || len(s) == 34 && s[0] == 0x51 && s[1] == 0x20
	}
	envelope := []byte{0x00, 0x63, 0x03, 'o', 'r', 'd', 0x01}
	res := make([][][]byte, len(blocks))
	for h, b := range blocks {
		perTx := map[bchain.Hash][][]byte{}
		excluded := map[bchain.Hash]bool{}
		for i := range b.Txs {
			tx := &b.Txs[i]
			var scripts [][]byte
			for _, in := range tx.Vin {
				if !in.Coinbase {
					scripts = append(scripts, testClassifier{}.OutputAddrDesc(outs[outKey{in.PrevTxid, in.PrevVout}]))
				}
			}
			for n, o := range tx.Vout {
				scripts = append(scripts, testClassifier{}.OutputAddrDesc(o.Script))
				outs[outKey{tx.Txid, uint32(n)}] = o.Script
			}
			scripts = slices.DeleteFunc(scripts, func(s []byte) bool { return !selected(s) })
			perTx[tx.Txid] = scripts
			inscribed := slices.ContainsFunc(tx.Vin, func(in bchain.Vin) bool {
				return len(in.Witness) > 2 && bytes.Contains(in.Witness[1], envelope)
			})
			if p.Scripts == FilterScriptsTaprootNoOrdinals && inscribed && len(scripts) > 0 {
				excluded[tx.Txid] = true
				for _, in := range tx.Vin {
					excluded[in.PrevTxid] = true
				}
			}
		}
		seen := map[string]bool{}
		for i := range b.Txs {
			if excluded[b.Txs[i].Txid] {
				continue
			}
			for _, s := range perTx[b.Txs[i].Txid] {
				if !seen[string(s)] {
					seen[string(s)] = true
					res[h] = append(res[h], s)
				}
			}
		}
	}
	return res
}

// Every stored filter is the Golomb set of exactly the scripts the block
// touches (checked against an independent replay), blocks with none have no
// row, and the filter matches each of its scripts; also after a bulk load.
func TestBlockFilterRowsMatchScripts(t *testing.T) {
	chain := newSynthChain(21)
	for i := 0; i < 60; i++ {
		chain.next("")
	}
	for _, fv := range filterVariants[1:] {
		t.Run(fv.name, func(t *testing.T) {
			want := expectedFilterScripts(chain.blocks, fv.p)
			perBlock := newTestIndex(t, openTestDB(t), 300, fv.p)
			connectAll(t, perBlock, chain.blocks)
			bulk := newTestIndex(t, openTestDB(t), 300, fv.p)
			bulkConnect(t, bulk, chain.blocks, BulkOptions{RoundBytes: 16 << 10, CacheBytes: 1})
			empty, excludedSome := 0, false
			for h, b := range chain.blocks {
				var key [gcs.KeySize]byte
				if !fv.p.ZeroedKey {
					copy(key[:], b.Hash[:gcs.KeySize])
				}
				var wantBytes []byte
				if len(want[h]) > 0 {
					f, err := gcs.BuildGCSFilter(fv.p.P, fv.p.M(), key, want[h])
					if err != nil {
						t.Fatal(err)
					}
					if wantBytes, err = f.NBytes(); err != nil {
						t.Fatal(err)
					}
				} else {
					empty++
				}
				for _, x := range []*UtxoIndex{perBlock, bulk} {
					got, err := ReadBlockFilter(x.db, b.Hash)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, wantBytes) {
						t.Fatalf("block %d: filter %x, want %x (scripts %x)", h, got, wantBytes, want[h])
					}
				}
				if len(wantBytes) == 0 {
					continue
				}
				f, err := gcs.FromNBytes(fv.p.P, fv.p.M(), wantBytes)
				if err != nil {
					t.Fatal(err)
				}
				if int(f.N()) != len(want[h]) {
					t.Fatalf("block %d: N %d, want %d", h, f.N(), len(want[h]))
				}
				for _, s := range want[h] {
					if ok, err := f.Match(key, s); err != nil || !ok {
						t.Fatalf("block %d: script %x does not match: %v", h, s, err)
					}
				}
			}
			if fv.p.Scripts == FilterScriptsTaprootNoOrdinals {
				all := expectedFilterScripts(chain.blocks, FilterParams{P: 20, Scripts: FilterScriptsTaproot})
				for h := range all {
					excludedSome = excludedSome || len(all[h]) > len(want[h])
				}
				if !excludedSome {
					t.Fatal("the chain has no inscription that changes a filter: the test proves nothing about ordinals")
				}
			}
			if empty == 0 || empty == len(chain.blocks) {
				t.Fatalf("%d of %d blocks without filter: the chain does not exercise both cases", empty, len(chain.blocks))
			}
		})
	}
}

// The filter parameters are fixed when the index is created: reopening with
// others is refused (naming the config keys) until a reindex, and so is an
// index that has blocks but no parameters.
func TestFilterParamsFixedAtCreation(t *testing.T) {
	prod := FilterParams{P: 20, Scripts: FilterScriptsTaprootNoOrdinals, ZeroedKey: true}
	d := openTestDB(t)
	x := newTestIndex(t, d, 10, prod)
	chain := newSynthChain(3)
	for i := 0; i < 5; i++ {
		connectAll(t, x, []*bchain.Block{chain.next("")})
	}
	if got, ok, err := ReadFilterParams(d); err != nil || !ok || got != prod {
		t.Fatalf("stored params %+v %v %v", got, ok, err)
	}
	// A new index over the same database (what a restart opens).
	if _, err := NewUtxoIndex(d, testClassifier{}, 10, prod); err != nil {
		t.Fatalf("same parameters refused: %v", err)
	}
	for _, other := range []FilterParams{{}, {P: 19, Scripts: prod.Scripts, ZeroedKey: true}, {P: 20, Scripts: FilterScriptsTaproot, ZeroedKey: true}, {P: 20, Scripts: prod.Scripts}} {
		_, err := NewUtxoIndex(d, testClassifier{}, 10, other)
		if !errors.Is(err, ErrIncompatible) {
			t.Fatalf("parameters %+v accepted: %v", other, err)
		}
		for _, key := range []string{"block_golomb_filter_p", "block_filter_scripts", "block_filter_use_zeroed_key", "reindex"} {
			if !strings.Contains(err.Error(), key) {
				t.Errorf("error does not mention %s: %v", key, err)
			}
		}
	}
	if _, err := NewUtxoIndex(d, testClassifier{}, 10, FilterParams{P: 33}); err == nil {
		t.Fatal("P=33 accepted")
	}
	// An index with blocks but without parameters is not silently adopted.
	b := d.NewBatch()
	b.del(CFDefault, stateKeyFilters)
	if err := d.write(b); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	if _, err := NewUtxoIndex(d, testClassifier{}, 10, prod); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("index with blocks and no parameters adopted: %v", err)
	}
}
