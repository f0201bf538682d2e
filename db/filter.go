package db

import (
	"bytes"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/v2/gcs"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/bip352"
)

// Golomb-coded set filters (BIP158's construction, built with btcutil's gcs)
// over the address descriptors a block or a mempool tx touches, so that a
// light wallet can test its scripts without downloading the block. The
// parameters and script selections are Blockbook's, so that the filters
// match byte for byte what its clients expect.

// Script selections of block_filter_scripts / mempool_filter_scripts.
const (
	FilterScriptsAll               = ""
	FilterScriptsTaproot           = "taproot"
	FilterScriptsTaprootNoOrdinals = "taproot-noordinals"
)

// FilterParams configures filters: P is the Golomb parameter (0 disables
// filters), M = 2^P the false-positive rate's inverse, Scripts the selection,
// ZeroedKey uses an all-zero SipHash key instead of the block hash or txid.
type FilterParams struct {
	P         uint8
	Scripts   string
	ZeroedKey bool
}

// Enabled reports whether filters are built at all.
func (p FilterParams) Enabled() bool { return p.P > 0 }

// M is the inverse false-positive rate, 2^P.
func (p FilterParams) M() uint64 { return 1 << p.P }

// Validate checks the parameters as configured.
func (p FilterParams) Validate() error {
	if p.P > 32 {
		return fmt.Errorf("golomb filter P must be at most 32, not %d", p.P)
	}
	switch p.Scripts {
	case FilterScriptsAll, FilterScriptsTaproot, FilterScriptsTaprootNoOrdinals:
		return nil
	}
	return fmt.Errorf("unsupported filter scripts %q (want \"\", %q or %q)", p.Scripts, FilterScriptsTaproot, FilterScriptsTaprootNoOrdinals)
}

// FilterBuilder collects the descriptors of one block (or one mempool tx).
type FilterBuilder struct {
	p   FilterParams
	key [gcs.KeySize]byte
	// perTx keeps the descriptors of each tx until Filter, because an
	// ordinal inscription found later in the block removes its parents.
	perTx    map[bchain.Hash][]bchain.AddrDesc
	ordinals map[bchain.Hash]struct{}
	data     [][]byte
	unique   map[string]struct{}
}

// NewFilterBuilder starts a filter keyed by id, a block hash or a txid (its
// first 16 bytes in display order, as Blockbook keys them).
func NewFilterBuilder(p FilterParams, id bchain.Hash) *FilterBuilder {
	b := &FilterBuilder{p: p, unique: map[string]struct{}{}}
	if !p.ZeroedKey {
		copy(b.key[:], id[:gcs.KeySize])
	}
	if p.Scripts == FilterScriptsTaprootNoOrdinals {
		b.perTx = map[bchain.Hash][]bchain.AddrDesc{}
		b.ordinals = map[bchain.Hash]struct{}{}
	}
	return b
}

// Add records descs (the scripts tx's inputs spend and its outputs pay).
func (b *FilterBuilder) Add(tx *bchain.Tx, descs ...bchain.AddrDesc) {
	for _, d := range descs {
		if len(d) == 0 || (b.p.Scripts != FilterScriptsAll && !bip352.IsP2TR(d)) {
			continue
		}
		if b.perTx == nil {
			b.include(d)
			continue
		}
		b.perTx[tx.Txid] = append(b.perTx[tx.Txid], d)
		// Like Blockbook, a tx is checked for an inscription only when it
		// touches a taproot script; it and the txs it spends are left out.
		if _, seen := b.ordinals[tx.Txid]; !seen && hasInscription(tx) {
			b.ordinals[tx.Txid] = struct{}{}
			for i := range tx.Vin {
				if !tx.Vin[i].Coinbase {
					b.ordinals[tx.Vin[i].PrevTxid] = struct{}{}
				}
			}
		}
	}
}

func (b *FilterBuilder) include(d bchain.AddrDesc) {
	if _, dup := b.unique[string(d)]; !dup {
		b.unique[string(d)] = struct{}{}
		b.data = append(b.data, d)
	}
}

// Filter returns the serialized filter (N as a varint, then the Golomb
// coded set), or nil when no descriptor qualified.
func (b *FilterBuilder) Filter() ([]byte, error) {
	for txid, descs := range b.perTx {
		if _, skip := b.ordinals[txid]; skip {
			continue
		}
		for _, d := range descs {
			b.include(d)
		}
	}
	b.perTx = nil
	if len(b.data) == 0 {
		return nil, nil
	}
	f, err := gcs.BuildGCSFilter(b.p.P, b.p.M(), b.key, b.data)
	if err != nil {
		return nil, fmt.Errorf("golomb filter: %w", err)
	}
	return f.NBytes()
}

// inscriptionEnvelope is the start of an ordinal inscription in a taproot
// script path spend: OP_FALSE OP_IF PUSH3 "ord" PUSH1.
var inscriptionEnvelope = []byte{0x00, 0x63, 0x03, 'o', 'r', 'd', 0x01}

// hasInscription reports whether an input reveals an ordinal inscription
// (a witness of at least three items whose second holds the envelope).
func hasInscription(tx *bchain.Tx) bool {
	for i := range tx.Vin {
		w := tx.Vin[i].Witness
		if len(w) > 2 && bytes.Contains(w[1], inscriptionEnvelope) {
			return true
		}
	}
	return false
}
