package db

// A bulk load does not read the stored balance of an address its cache
// lacks: on the 20 M scale chain those were 22 M random reads, a fifth of
// the load's CPU. It writes the round's change of the balance as a merge
// operand instead, and the engine adds the operands to the stored row
// whenever the row is read or compacted. Readers only ever see the sum.

// Merger combines a row's stored value with the merge operands written
// after it (RunWriter.Merge).
type Merger struct {
	// Name names the semantics to the engine.
	Name string
	// Merge returns the value after the operands (oldest first) are
	// applied to existing (nil: no stored row). An error marks the row
	// corrupt.
	Merge func(existing []byte, operands [][]byte) ([]byte, error)
}

// Merger returns the column family's merger, nil for a family without
// merge operands.
func (c CF) Merger() *Merger {
	if c == CFAddressBalance {
		return &balanceMerger
	}
	return nil
}

var balanceMerger = Merger{Name: "blockbook.addressBalance.1", Merge: mergeBalance}

// packBalanceChange encodes a balance change as an operand:
// sv(txs) ‖ sv(sent) ‖ sv(received) ‖ sv(utxos), zigzag varints.
func packBalanceChange(d *balanceDelta) []byte { return appendBalanceChange(make([]byte, 0, 16), d) }

// appendBalanceChange appends packBalanceChange(d) to b.
func appendBalanceChange(b []byte, d *balanceDelta) []byte {
	e := encoder{b: b}
	for _, v := range [...]int64{d.txs, d.sent, d.received, d.utxos} {
		e.varint(v)
	}
	return e.b
}

func unpackBalanceChange(b []byte) (*balanceDelta, error) {
	d := newDecoder("addressBalance operand", b)
	c := &balanceDelta{txs: d.varint(), sent: d.varint(), received: d.varint(), utxos: d.varint()}
	return c, d.done()
}

func mergeBalance(existing []byte, operands [][]byte) ([]byte, error) {
	cur := &AddrBalance{}
	if existing != nil {
		var err error
		if cur, err = unpackAddrBalance(existing); err != nil {
			return nil, err
		}
	}
	for _, op := range operands {
		d, err := unpackBalanceChange(op)
		if err != nil {
			return nil, err
		}
		if cur, err = applyBalanceDelta(cur, d); err != nil {
			return nil, err
		}
	}
	return packAddrBalance(cur), nil
}

// The operands of a run are changes, so a run of a merging family must be
// ingested once: the crash-safe protocol (ingest.go) may find it still
// staged after a kill that fell between its ingestion and the removal of
// the staged copy. Such a run holds its round's mark, a row which
// the commit of the round deletes: a staged run whose round's mark is
// stored was ingested. The key, 00 ‖ u32be(last height), is 5 bytes, and
// so never a row's key (addressBalance keys are 9 bytes or more). Rounds'
// marks differ, so that a run's key range rarely takes in the deleted mark
// of the round before it: RocksDB flushes the memtables before it ingests
// a run that overlaps them.
func mergeRunMark(to uint32) []byte { return append([]byte{0}, heightKey(to)...) }

// mergeRunIngested tells whether the round's run of cf is in the index.
func (d *DB) mergeRunIngested(cf CF, r *BulkRound) (bool, error) {
	v, err := d.get(cf, mergeRunMark(r.To))
	return v != nil, err
}
