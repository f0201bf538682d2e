package db

// The bulk-load round record of the default column family (see bulk.go).

import "github.com/openexplorer/blockbook/bchain"

// BulkRound is the pending-ingest record of a bulk-load round:
// u32be(fromHeight) ‖ u32be(toHeight) ‖ tipHash ‖ uv(#files) ‖ #files ×
// (uv(cf) ‖ lb(fileName)). Files are relative to the staging directory.
type BulkRound struct {
	From, To uint32
	TipHash  bchain.Hash
	Files    []BulkFile
}

// BulkFile is one staged run (an SST file on RocksDB) and the column
// family it belongs to.
type BulkFile struct {
	CF   CF
	Name string
}

func packBulkRound(r *BulkRound) []byte {
	e := encoder{b: make([]byte, 0, 48+len(r.Files)*24)}
	e.u32be(r.From)
	e.u32be(r.To)
	e.hash(r.TipHash)
	e.uvarint(uint64(len(r.Files)))
	for _, f := range r.Files {
		e.uvarint(uint64(f.CF))
		e.lenBytes([]byte(f.Name))
	}
	return e.b
}

func unpackBulkRound(b []byte) (*BulkRound, error) {
	d := newDecoder("bulkRound", b)
	r := &BulkRound{From: d.u32be(), To: d.u32be(), TipHash: d.hash()}
	r.Files = make([]BulkFile, d.count(2))
	for i := range r.Files {
		cf := d.uvarint()
		if cf == 0 || cf >= uint64(numCF) {
			d.fail("unknown column family %d", cf)
		}
		r.Files[i] = BulkFile{CF: CF(cf), Name: string(d.lenBytes(255))}
	}
	return r, d.done()
}
