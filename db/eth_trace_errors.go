package db

import (
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// TraceError is a block indexed without (some of) its internal transfers
// because its trace failed: /admin/internal-data-errors lists them.
type TraceError struct {
	Height  uint32
	Hash    bchain.Hash
	Message string
}

// ReadTraceErrors lists the blocks whose trace failed, oldest first.
func ReadTraceErrors(r Reader) ([]TraceError, error) {
	var out []TraceError
	err := r.iterate(CFBlockInternalDataErrors, nil, nil, func(k, v []byte) (bool, error) {
		h, err := unpackHeightKey(k)
		if err != nil {
			return false, err
		}
		meta, err := ReadBlockMeta(r, h)
		if err != nil {
			return false, err
		}
		if meta == nil {
			return false, fmt.Errorf("%w: trace error row for block %d, which is not indexed", ErrCorrupt, h)
		}
		out = append(out, TraceError{Height: h, Hash: meta.Hash, Message: string(v)})
		return true, nil
	})
	return out, err
}
