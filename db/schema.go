package db

// schema.go is the one place that lists the index layout: every column
// family and the internal state here, and for each row a builder and a
// bounds-checked decoder: the Bitcoin-type rows below, the rows both chain
// types write in schema_shared.go, the Ethereum-type rows in schema_eth.go
// (bulk rounds and fiat rates: schema_bulk.go, schema_fiat.go).
// docs/schema.md mirrors them; a test keeps them in step.
//
// Notation: ‖ concatenation, u32be a 4-byte big-endian integer, ^x the
// bitwise complement (so larger heights sort first), uv an unsigned LEB128
// varint (minimal encoding enforced), lb a uv length followed by the bytes.

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// FormatVersion is stored in the index; a different version refuses to open.
// Version 2 added the blockFilter column family and the filter parameters;
// version 3 the raw block header in height rows and the blockTxids and
// scriptHashes column families (schema_script.go); version 4 refers to txs
// by their position (height, index in block) instead of repeating txids in
// addresses, spends and blockTxs, keys blockTxids by position, and keys
// addressBalance by the script hash's first bytes and the descriptor, which
// replaces the scriptHashes column family.
const FormatVersion = 4

// CF identifies a column family.
type CF int

const (
	CFDefault        CF = iota // internal state, see the state* keys
	CFHeight                   // u32be(height) → BlockMeta
	CFAddresses                // lb(desc) ‖ u32be(^height) → AddrTxs of that block (by tx index)
	CFAddressBalance           // sha256(desc)[:8] ‖ desc → AddrBalance (format 4; desc before)
	CFAddressUtxos             // lb(desc) ‖ u32be(^height) ‖ txid ‖ u32be(vout) → UtxoValue
	CFTxAddresses              // txid → TxAddresses
	CFSpends                   // u32be(height) ‖ uv(index) ‖ uv(vout) of the spent output → Spend
	CFBlockTxs                 // u32be(height) → BlockUndo, last block_addresses_to_keep blocks
	CFBlockFilter              // hash → Golomb filter of the block's scripts (when enabled and not empty)
	CFTransactions             // txid → raw tx (cache)
	CFFiatRates                // 't' ‖ u32be(unix time) → FiatTicker; 'c' → current ticker; 'h'/'f' hourly/5-minute; 'b' bootstrap marker (off-chain, schema_fiat.go)
	// Ethereum-type only (schema_eth.go); Ethereum-type chains use
	// CFAddresses and CFBlockTxs in their Ethereum form.
	CFAddressContracts        // address → AddrContracts
	CFInternalData            // txid → InternalData
	CFContracts               // contract → ContractInfo
	CFBlockInternalDataErrors // u32be(height) → trace error text, until the block is traced
	// Bitcoin-type, added in version 3 (schema_script.go).
	CFBlockTxids // u32be(height) ‖ u32be(index) → txid (format 4)
	// Bitcoin-type, kept with -esploraaddressprefix (schema_prefix.go).
	CFAddressPrefix // address → (empty)
	// Ethereum-type: ENS names of addresses (schema_eth_alias.go).
	CFAddressAliases // 'a' ‖ address ‖ u32be(^height) → name; 'b' ‖ u32be(height) → addresses
	CFPushdata       // Bitcoin-type, -pushdataindex (db/optional/pushdata): sha256(push) ‖ u32be(height) ‖ uv(index) ‖ uv(n << 1 | input) → (empty)
	CFRunes          // Bitcoin-type, -runesindex (db/optional/runes): first byte 'o', 'e', 'n', 'a', 'u', 'c', 't' or 'h'
	CFSilentPayments // Bitcoin-type, -silentpaymentsindex (db/optional/silentpayments): u32be(height) ‖ u32be(index) → tweak ‖ taproot outputs
	// Ethereum-type, off-chain: function signatures by selector (schema_fourbyte.go).
	CFFunctionSignatures // u32be(selector) ‖ u32be(id) → text signature; "dl" → the downloader's place
	numCF
)

// RetiredColumnFamilies are families that earlier index formats of this
// program wrote and this one does not: scriptHashes (versions 3 and 4's
// first drafts), now part of the addressBalance key.
var RetiredColumnFamilies = []string{"scriptHashes"}

type cfInfo struct {
	name string
	// cache: derived on demand; out of dumps and the byte-identity guarantee.
	cache bool
	// optional: an optional index's family that older indexes lack (IsAddedOptional).
	optional bool
	storage  Storage
}

// Storage says how a column family is read and what its values look like,
// which is what an engine tunes its tables for. The zero value is a family
// read by point lookups of keys that may be absent.
type Storage struct {
	// Scanned: read by prefix scans, and by point reads only of keys known
	// to exist, so a Bloom filter would never save a read.
	Scanned bool
	// Random: the values are random bytes (txids) that compression cannot
	// shrink; they are read a row at a time, so small blocks pay.
	Random bool
	// Repetitive: the values repeat byte strings (descriptors) far apart in
	// the family, which a compression dictionary captures.
	Repetitive bool
	// SmallReads: most reads take one key, or a few adjacent ones, at a
	// random place (an address's balance, the first rows of its history),
	// so a block larger than a few rows is decompressed for nothing.
	SmallReads bool
	// Appended: keys begin with the height, so a bulk round's rows sort
	// after every row held, and its run lands in the last level as it is.
	Appended bool
}

var cfInfos = [numCF]cfInfo{
	CFDefault:        {name: "default"},
	CFHeight:         {name: "height", storage: Storage{Appended: true}},
	CFAddresses:      {name: "addresses", storage: Storage{Scanned: true, SmallReads: true}},
	CFAddressBalance: {name: "addressBalance", storage: Storage{SmallReads: true}},
	CFAddressUtxos:   {name: "addressUtxos", storage: Storage{Scanned: true}},
	CFTxAddresses:    {name: "txAddresses", storage: Storage{Repetitive: true}},
	CFSpends:         {name: "spends", storage: Storage{Scanned: true}},
	CFBlockTxs:       {name: "blockTxs", storage: Storage{Scanned: true}},
	CFBlockFilter:    {name: "blockFilter"},
	CFTransactions:   {name: "transactions", cache: true},
	CFFiatRates:      {name: "fiatRates"}, // off-chain, see schema_fiat.go

	CFAddressContracts:        {name: "addressContracts"},
	CFInternalData:            {name: "internalData"},
	CFContracts:               {name: "contracts"},
	CFBlockInternalDataErrors: {name: "blockInternalDataErrors"},

	CFBlockTxids: {name: "blockTxids", storage: Storage{Scanned: true, Random: true, Appended: true}},

	CFAddressPrefix:  {name: "addressPrefix"},
	CFAddressAliases: {name: "addressAliases"},
	CFPushdata:       {name: "pushdata", optional: true, storage: Storage{Scanned: true}},
	CFRunes:          {name: "runes", optional: true},
	CFSilentPayments: {name: "silentPayments", optional: true, storage: Storage{Scanned: true, Appended: true}},

	CFFunctionSignatures: {name: "functionSignatures", storage: Storage{Scanned: true}}, // off-chain, see schema_fourbyte.go
}

func (c CF) String() string {
	if c >= 0 && c < numCF {
		return cfInfos[c].name
	}
	return fmt.Sprintf("CF(%d)", int(c))
}

// Storage returns how the column family is read, for engines to tune it.
func (c CF) Storage() Storage { return cfInfos[c].storage }

// IsCache reports whether the column family holds only cached data.
func (c CF) IsCache() bool { return cfInfos[c].cache }

// ColumnFamilies lists the column families a chain type uses, in opening order.
func ColumnFamilies(t bchain.ChainType) []CF {
	switch t {
	case bchain.ChainBitcoinType:
		return []CF{CFDefault, CFHeight, CFAddresses, CFAddressBalance, CFAddressUtxos,
			CFTxAddresses, CFSpends, CFBlockTxs, CFBlockFilter, CFBlockTxids, CFAddressPrefix, CFPushdata, CFRunes, CFSilentPayments, CFTransactions, CFFiatRates}
	case bchain.ChainEthereumType, bchain.ChainTronType: // Tron's account-model rows are Ethereum's
		return []CF{CFDefault, CFHeight, CFAddresses, CFAddressContracts, CFInternalData, CFContracts,
			CFBlockTxs, CFBlockInternalDataErrors, CFAddressAliases, CFTransactions, CFFiatRates, CFFunctionSignatures}
	}
	return nil
}

// ---- default: internal state -------------------------------------------

// Keys of the default column family. Volatile keys change without the chain
// changing (timestamps) and are excluded from dump comparisons.
var (
	stateKeyFormat  = []byte("format")  // u32be(FormatVersion)
	stateKeyCoin    = []byte("coin")    // coin_name, UTF-8
	stateKeyNetwork = []byte("network") // network name, UTF-8
	stateKeyTip     = []byte("tip")     // u32be(height) ‖ hash; absent while empty
	stateKeyCreated = []byte("created") // uv(unix seconds) — volatile
	// stateKeyBulk marks a bulk-load round whose SST files are being
	// ingested; see BulkRound. Absent between rounds.
	stateKeyBulk = []byte("bulkRound")
	// stateKeyFilters holds the block filter parameters the index was built
	// with (see packFilterParams); written by the first NewUtxoIndex.
	stateKeyFilters = []byte("blockFilterParams")

	// blockbookStateKey is where Blockbook itself keeps its state; seeing it
	// means the datadir was written by Blockbook, not by us.
	blockbookStateKey = []byte("internalState")
)

// Tip is the last connected block.
type Tip struct {
	Height uint32
	Hash   bchain.Hash
}

func packTip(t Tip) []byte {
	e := encoder{b: make([]byte, 0, 36)}
	e.u32be(t.Height)
	e.hash(t.Hash)
	return e.b
}

func unpackTip(b []byte) (Tip, error) {
	d := newDecoder("tip", b)
	t := Tip{Height: d.u32be(), Hash: d.hash()}
	return t, d.done()
}

// packFilterParams encodes the block filter parameters the index was built
// with, u8(P) ‖ u8(zeroedKey) ‖ lb(scripts); every stored filter depends on
// them. P above 32 or scripts longer than 64 bytes are corruption.
func packFilterParams(p FilterParams) []byte {
	e := encoder{b: []byte{p.P, 0}}
	if p.ZeroedKey {
		e.b[1] = 1
	}
	e.lenBytes([]byte(p.Scripts))
	return e.b
}

func unpackFilterParams(b []byte) (FilterParams, error) {
	d := newDecoder("blockFilterParams", b)
	var p FilterParams
	if h := d.bytes(2); h != nil && (h[0] > 32 || h[1] > 1) {
		d.fail("P %d or zeroed key flag %d out of range", h[0], h[1])
	} else if h != nil {
		p.P, p.ZeroedKey = h[0], h[1] == 1
	}
	p.Scripts = string(d.lenBytes(64))
	return p, d.done()
}

// ---- addresses -----------------------------------------------------------

// AddrTx is one tx in an addresses row: its index in the block (the
// height is in the row's key) and, filled by the accessors from
// blockTxids, its txid. Indexes say where the address appears: v >= 0 is
// output v, v < 0 is input ^v.
type AddrTx struct {
	Txid    bchain.Hash // not stored in the row; see ReadTxidAt
	Index   uint32      // the tx's index in its block
	Indexes []int32
}

// packAddrTxs encodes the txs in the order given (the index stores them
// newest first, so tx indexes strictly decrease): per tx uv(tx index) ‖
// uv(n) ‖ n × uv(index code), where the index code of output v is v<<1 and
// of input v is v<<1|1.
func packAddrTxs(txs []AddrTx) []byte {
	e := encoder{b: make([]byte, 0, len(txs)*6)}
	for i := range txs {
		e.uvarint(uint64(txs[i].Index))
		e.uvarint(uint64(len(txs[i].Indexes)))
		for _, idx := range txs[i].Indexes {
			if idx >= 0 {
				e.uvarint(uint64(idx) << 1)
			} else {
				e.uvarint(uint64(^idx)<<1 | 1)
			}
		}
	}
	return e.b
}

func unpackAddrTxs(b []byte) ([]AddrTx, error) {
	d := newDecoder("addresses", b)
	// One allocation for the entries (3 bytes at least each), one for all their Indexes.
	txs, codes := make([]AddrTx, 0, len(b)/3), make([]int32, 0, len(b)/2)
	for d.more() {
		t := AddrTx{Index: d.uvarint32()}
		if n := len(txs); n > 0 && d.e == nil && t.Index >= txs[n-1].Index {
			// One entry per tx, newest first: no row the builder writes.
			d.fail("tx index %d after %d", t.Index, txs[n-1].Index)
		}
		n := d.count(1)
		if n == 0 {
			d.fail("tx without indexes")
		}
		start := len(codes)
		for range n {
			c := d.uvarint()
			if c>>1 > 0x7fffffff {
				d.fail("index %d out of range", c>>1)
			}
			codes = append(codes, int32(c>>1)^-int32(c&1)) // ^v for an input
		}
		t.Indexes = codes[start:len(codes):len(codes)] // capped: an append copies
		txs = append(txs, t)
	}
	return txs, d.done()
}

// ---- addressBalance ----------------------------------------------------

// AddrBalance is uv(txs) ‖ uv(sent) ‖ uv(balance) ‖ uv(utxos). Received is
// derived: balance + sent. A descriptor with no txs has no row at all.
type AddrBalance struct {
	Txs     uint32
	Sent    uint64
	Balance uint64
	Utxos   uint32
}

// Received is the total ever paid to the descriptor.
func (b *AddrBalance) Received() uint64 { return b.Balance + b.Sent }

func packAddrBalance(b *AddrBalance) []byte { return appendAddrBalance(make([]byte, 0, 24), b) }

func unpackAddrBalance(b []byte) (*AddrBalance, error) {
	d := newDecoder("addressBalance", b)
	ab := &AddrBalance{Txs: d.uvarint32(), Sent: d.uvarint(), Balance: d.uvarint(), Utxos: d.uvarint32()}
	if d.e == nil && ab.Balance+ab.Sent < ab.Balance {
		d.fail("received overflows")
	}
	return ab, d.done()
}

// ---- addressUtxos --------------------------------------------------------

// Utxo is one unspent output of a descriptor. Its key orders a descriptor's
// outputs newest block first; the value is uv(value) ‖ u8(flags), flag bit 0
// marking coinbase outputs.
type Utxo struct {
	Height   uint32
	Txid     bchain.Hash
	Vout     uint32
	Value    uint64
	Coinbase bool
}

func utxoKey(desc bchain.AddrDesc, u *Utxo) []byte {
	return appendUtxoKey(make([]byte, 0, len(desc)+42), desc, u)
}

// utxoKeyHeight returns the height in an addressUtxos key (0 for a key
// too short to hold one).
func utxoKeyHeight(key []byte) uint32 {
	if len(key) < 40 {
		return 0
	}
	return ^binary.BigEndian.Uint32(key[len(key)-40:])
}

// utxoKeyVout returns the vout at the end of an addressUtxos key.
func utxoKeyVout(key []byte) uint32 {
	if len(key) < 40 {
		return 0
	}
	return binary.BigEndian.Uint32(key[len(key)-4:])
}

func packUtxoValue(u *Utxo) []byte { return appendUtxoValue(make([]byte, 0, 10), u) }

// unpackUtxo decodes a full addressUtxos row into u (a scan of a whale's
// outputs reuses one).
func unpackUtxo(key, val []byte, u *Utxo) (bchain.AddrDesc, error) {
	d := decoder{b: key, rec: "addressUtxos key"}
	desc := d.lenBytes(maxDescLen)
	*u = Utxo{Height: ^d.u32be(), Txid: d.hash(), Vout: d.u32be()}
	if err := d.done(); err != nil {
		return nil, err
	}
	d = decoder{b: val, rec: "addressUtxos"}
	u.Value = d.uvarint()
	flags := d.bytes(1)
	if flags != nil && flags[0] > 1 {
		d.fail("unknown flags %#x", flags[0])
	}
	u.Coinbase = flags != nil && flags[0] == 1
	return desc, d.done()
}

// ---- txAddresses ---------------------------------------------------------

// TxAddr is one input's prevout or one output: descriptor and value. An
// empty descriptor marks an output that is not indexed (OP_RETURN) and the
// coinbase input.
type TxAddr struct {
	Desc  bchain.AddrDesc
	Value uint64
}

// TxAddresses is uv(height) ‖ uv(index) ‖ uv(flags) ‖ uv(#in) ‖ #in ×
// (uv(height − prevout height) ‖ uv(prevout index) ‖ uv(prevout vout)) ‖
// uv(#out) ‖ #out × (lb(desc) ‖ uv(value)); index is the tx's position in
// its block, flag bit 0 marks a coinbase, whose inputs have no bytes. An
// input names the output it spends by position: its descriptor and value
// are in the row of the tx that created it, not repeated here. Written once
// when the tx is connected and never modified.
type TxAddresses struct {
	Height   uint32
	Index    uint32
	Coinbase bool
	// Prevouts are the outputs the inputs spend (zero for a coinbase's);
	// the row stores their positions, ReadTxAddresses fills Txid and
	// Coinbase.
	Prevouts []Prevout
	// Inputs are the descriptor and value of each input's previous
	// output: not in the row, filled by ReadTxAddresses.
	Inputs  []TxAddr
	Outputs []TxAddr
}

func packTxAddresses(ta *TxAddresses) []byte {
	return appendTxAddresses(make([]byte, 0, txAddressesSize(ta)), ta)
}

func unpackTxAddresses(b []byte) (*TxAddresses, error) {
	d := newDecoder("txAddresses", b)
	ta := &TxAddresses{Height: d.uvarint32(), Index: d.uvarint32()}
	flags := d.uvarint()
	if flags > 1 {
		d.fail("unknown flags %#x", flags)
	}
	ta.Coinbase = flags == 1
	minIn := 3 // bytes per input
	if ta.Coinbase {
		minIn = 0
	}
	ta.Prevouts = make([]Prevout, d.count(minIn))
	for i := 0; i < len(ta.Prevouts) && !ta.Coinbase; i++ {
		back := d.uvarint32()
		if back > ta.Height {
			d.fail("input %d spends an output %d blocks before block 0", i, back)
		}
		ta.Prevouts[i] = Prevout{Height: ta.Height - back, Index: d.uvarint32(), Vout: d.uvarint32()}
	}
	ta.Outputs = make([]TxAddr, d.count(2))
	for i := range ta.Outputs {
		ta.Outputs[i] = TxAddr{Desc: d.lenBytes(maxDescLen), Value: d.uvarint()}
	}
	return ta, d.done()
}

// ---- spends ----------------------------------------------------------------

// Spend records which input spent an output: the spending tx's position
// and input, uv(height) ‖ uv(index) ‖ uv(vin). Txid is not stored; the
// accessors fill it from blockTxids.
type Spend struct {
	Txid   bchain.Hash
	Index  uint32 // the spending tx's index in its block
	Vin    uint32
	Height uint32
}

// spendPrefix is u32be(height) ‖ uv(index), the position of the tx whose
// outputs were spent. LEB128 is prefix-free, so a prefix scan finds
// exactly that tx's spent outputs.
func spendPrefix(height, index uint32) []byte {
	e := encoder{b: make([]byte, 0, 14)}
	e.u32be(height)
	e.uvarint(uint64(index))
	return e.b
}

// spendKey is spendPrefix ‖ uv(vout) of the spent output.
func spendKey(height, index, vout uint32) []byte {
	return appendSpendKey(make([]byte, 0, 14), height, index, vout)
}

func unpackSpendKey(k []byte) (height, index, vout uint32, err error) {
	d := newDecoder("spends key", k)
	height, index, vout = d.u32be(), d.uvarint32(), d.uvarint32()
	return height, index, vout, d.done()
}

func packSpend(s *Spend) []byte { return appendSpend(make([]byte, 0, 12), s) }

func unpackSpend(b []byte) (*Spend, error) {
	d := newDecoder("spends", b)
	s := &Spend{Height: d.uvarint32(), Index: d.uvarint32(), Vin: d.uvarint32()}
	return s, d.done()
}

// ---- blockTxs: undo data -----------------------------------------------------

// Prevout is an input's previous output as the undo data records it.
type Prevout struct {
	Txid     bchain.Hash // not stored in the undo data; filled by ReadBlockUndo
	Vout     uint32
	Height   uint32 // height of the block that created the output
	Index    uint32 // index in that block of the tx that created it
	Coinbase bool   // the output was created by a coinbase tx
}

// UndoTx is one tx of a block in the undo data.
type UndoTx struct {
	Txid     bchain.Hash // not stored (blockTxids has it); filled by ReadBlockUndo
	Prevouts []Prevout   // one per input; empty for the coinbase
}

// BlockUndo is uv(#tx) ‖ #tx × (uv(#in) ‖ #in × (uv(height) ‖ uv(index) ‖
// uv(vout<<1|coinbase))), in block order: each input's previous output by
// its creating tx's position. Together with the block's blockTxids and its
// txs' txAddresses rows it is exactly what disconnecting the block needs.
type BlockUndo []UndoTx

func packBlockUndo(u BlockUndo) []byte {
	size := 4
	for i := range u {
		size += 2 + len(u[i].Prevouts)*9
	}
	e := encoder{b: make([]byte, 0, size)}
	e.uvarint(uint64(len(u)))
	for i := range u {
		e.uvarint(uint64(len(u[i].Prevouts)))
		for _, p := range u[i].Prevouts {
			e.uvarint(uint64(p.Height))
			e.uvarint(uint64(p.Index))
			cb := uint64(0)
			if p.Coinbase {
				cb = 1
			}
			e.uvarint(uint64(p.Vout)<<1 | cb)
		}
	}
	return e.b
}

func unpackBlockUndo(b []byte) (BlockUndo, error) {
	d := newDecoder("blockTxs", b)
	u := make(BlockUndo, d.count(1))
	for i := range u {
		u[i].Prevouts = make([]Prevout, d.count(3))
		for j := range u[i].Prevouts {
			p := &u[i].Prevouts[j]
			p.Height = d.uvarint32()
			p.Index = d.uvarint32()
			v := d.uvarint()
			if v>>1 > 0xffffffff {
				d.fail("vout %d out of range", v>>1)
			}
			p.Vout, p.Coinbase = uint32(v>>1), v&1 == 1
		}
	}
	return u, d.done()
}

// ---- blockFilter -------------------------------------------------------------

// blockFilterKey is the block hash in display order, as Blockbook keys its
// blockFilter column.
func blockFilterKey(hash bchain.Hash) []byte { return append([]byte(nil), hash[:]...) }

// A blockFilter value is the filter as FilterBuilder serializes it (and
// Blockbook serves it): CompactSize(N) ‖ the Golomb-coded set of N ≥ 1
// items; a block whose filter is empty has no row. unpackBlockFilter checks
// that framing (canonical N, at least two bits per item, as P ≥ 1) and
// returns N; the coded set itself is served as stored.
func unpackBlockFilter(b []byte) (uint64, error) {
	r := bytes.NewReader(b)
	n, err := wire.ReadVarInt(r, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: blockFilter: %v", ErrCorrupt, err)
	}
	if n == 0 || r.Len() == 0 || n > uint64(r.Len())*4 {
		return 0, fmt.Errorf("%w: blockFilter: %d items in %d bytes", ErrCorrupt, n, r.Len())
	}
	return n, nil
}
