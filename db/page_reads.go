package db

import "fmt"

// ReadManySpends is ReadSpendsAt for several confirmed txs at once (a page
// of an address's history): the spends rows of all their outputs with one
// read and the spenders' txids with one more (MultiGets on RocksDB). A
// row names its tx's outputs, so the keys are exact: no prefix scan, which
// on RocksDB opened an iterator per tx. out[i] is nil when tas[i] is nil
// or none of its outputs is spent.
func ReadManySpends(r Reader, tas []*TxAddresses) ([]map[uint32]*Spend, error) {
	type output struct{ tx, vout int }
	var keys [][]byte
	var outs []output
	for i, ta := range tas {
		if ta == nil {
			continue
		}
		for n := range ta.Outputs {
			keys = append(keys, spendKey(ta.Height, ta.Index, uint32(n)))
			outs = append(outs, output{i, n})
		}
	}
	out := make([]map[uint32]*Spend, len(tas))
	if len(keys) == 0 {
		return out, nil
	}
	vals, err := getMany(r, CFSpends, keys)
	if err != nil {
		return nil, err
	}
	var spends []*Spend
	var spenders []TxPos
	for k, v := range vals {
		if v == nil {
			continue
		}
		o := outs[k]
		s, err := unpackSpend(v)
		if err != nil {
			ta := tas[o.tx]
			return nil, fmt.Errorf("spend of output %d of tx %d in block %d: %w", o.vout, ta.Index, ta.Height, err)
		}
		if out[o.tx] == nil {
			out[o.tx] = make(map[uint32]*Spend)
		}
		out[o.tx][uint32(o.vout)] = s
		spends, spenders = append(spends, s), append(spenders, TxPos{s.Height, s.Index})
	}
	if len(spenders) == 0 {
		return out, nil
	}
	txids, err := ReadTxidsAt(r, spenders)
	if err != nil {
		return nil, fmt.Errorf("spenders: %w", err)
	}
	for i, s := range spends {
		s.Txid = txids[i]
	}
	return out, nil
}
