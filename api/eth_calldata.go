package api

import (
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/calldata"
	"github.com/openexplorer/blockbook/db"
)

// parsedData decodes a tx's input data with the signatures the index
// holds for its selector (Blockbook's parsedData). A failed read of the
// signatures leaves it out, as in Blockbook; a renderer without a view
// (unit tests of the shape) decodes with none.
func (r *ethRenderer) parsedData(data []byte) *EthereumParsedInputData {
	var sigs []calldata.Signature
	// Selector 0 is never looked up, as in Blockbook: bots call it, and
	// the directory's vanity signatures for it would name their calls.
	if len(data) >= 4 && r.v != nil && binary.BigEndian.Uint32(data) != 0 {
		sel := binary.BigEndian.Uint32(data)
		r.mu.Lock()
		cached, ok := r.signatures[sel]
		r.mu.Unlock()
		if ok {
			sigs = cached
		} else {
			var err error
			if sigs, err = db.ReadSignatures(r.v.snap, sel); err != nil {
				r.s.log.Warn("reading function signatures failed", "selector", sel, "err", err)
				return nil
			}
			r.mu.Lock()
			r.signatures[sel] = sigs
			r.mu.Unlock()
		}
	}
	d := calldata.Decode(data, sigs, func(a [20]byte) string { return r.s.addr(bchain.AddrDesc(a[:])) })
	if d == nil {
		return nil
	}
	out := &EthereumParsedInputData{MethodID: d.MethodID, Name: d.Name, Function: d.Function}
	for _, p := range d.Params {
		out.Params = append(out.Params, EthereumParsedInputParam{Type: p.Type, Values: p.Values})
	}
	return out
}

// callData is a tx's parsedData as render shows it: none in pending
// txs' notifications (as Blockbook's). On Tron, address parameters show
// as Tron addresses (the service renders every address so), as Blockbook's.
func (r *ethRenderer) callData(data []byte) *EthereumParsedInputData {
	if r.noSpecific {
		return nil
	}
	return r.parsedData(data)
}

// parsedDataOf is parsedData of input data as an answer shows it (0x hex,
// "" for none); nil when it is not hex.
func (r *ethRenderer) parsedDataOf(data string) *EthereumParsedInputData {
	b, err := hex.DecodeString(strings.TrimPrefix(data, "0x"))
	if err != nil {
		return nil
	}
	return r.parsedData(b)
}
