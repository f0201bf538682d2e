package db

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// CFStats are the row count and key and value bytes of one column family
// (what -computedbstats prints).
type CFStats struct {
	CF                   CF
	Rows                 int64
	KeyBytes, ValueBytes int64
	// DiskBytes are the family's table files on disk (compressed), -1
	// where the engine does not know them.
	DiskBytes int64
}

// diskSizer is implemented by engines that know each column family's
// table-file bytes.
type diskSizer interface {
	DiskBytes(cf CF) (int64, bool)
}

// ColumnStats scans every column family of the index and counts its rows
// and bytes. It reads the whole database, so it takes as long as a full
// scan; ctx stops it early.
func (d *DB) ColumnStats(ctx context.Context) ([]CFStats, error) {
	out := make([]CFStats, 0, len(d.cfs))
	for _, cf := range d.cfs {
		s := CFStats{CF: cf, DiskBytes: -1}
		if ds, ok := d.eng.(diskSizer); ok {
			if n, ok := ds.DiskBytes(cf); ok {
				s.DiskBytes = n
			}
		}
		err := d.iterate(cf, nil, nil, func(k, v []byte) (bool, error) {
			s.Rows++
			s.KeyBytes += int64(len(k))
			s.ValueBytes += int64(len(v))
			if s.Rows%100_000 == 0 {
				return ctx.Err() == nil, ctx.Err()
			}
			return true, nil
		})
		if err != nil {
			return out, fmt.Errorf("db: scanning %s: %w", cf, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// maxVerifyProblems bounds the problems Verify lists; past it the index
// is clearly damaged and more detail does not help.
const maxVerifyProblems = 50

// Verify checks the index for damage the program can detect without the
// node: every row of every column family must read back (RocksDB checks
// block checksums on read), the block rows must decode and run without a
// gap up to the tip, the tip must name the last of them, and the rows
// that balances and tx records live in must decode. An empty result
// means nothing needs repair. Errors are failures to read at all.
func (d *DB) Verify(ctx context.Context) ([]string, error) {
	var problems []string
	report := func(format string, args ...any) bool {
		if len(problems) < maxVerifyProblems {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		return len(problems) < maxVerifyProblems
	}
	tip, hasTip, err := ReadTip(d)
	if err != nil {
		report("the tip record does not decode: %v", err)
	}
	if err := d.verifyHeights(tip, hasTip, report); err != nil {
		return problems, err
	}
	for _, cf := range d.cfs {
		decode := rowDecoders[cf]
		err := d.iterate(cf, nil, nil, func(k, v []byte) (bool, error) {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			if decode != nil {
				if err := decode(k, v); err != nil {
					return report("%s row %x does not decode: %v", cf, k, err), nil
				}
			}
			return true, nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return problems, ctx.Err()
			}
			report("%s cannot be read through: %v", cf, err)
		}
	}
	return problems, nil
}

// rowDecoders decode the rows whose damage would break answers.
var rowDecoders = map[CF]func(k, v []byte) error{
	CFAddressBalance: func(k, v []byte) error {
		if _, err := unpackBalanceKey(k); err != nil {
			return err
		}
		_, err := unpackAddrBalance(v)
		return err
	},
	CFTxAddresses: func(_, v []byte) error { _, err := unpackTxAddresses(v); return err },
	// The rows other rows name txs through (format 4).
	CFBlockTxids: func(k, v []byte) error {
		if _, _, err := unpackBlockTxidKey(k); err != nil {
			return err
		}
		_, err := unpackBlockTxids(v)
		return err
	},
	CFAddressPrefix: func(k, v []byte) error { _, err := unpackAddressPrefix(k, v); return err },
}

// verifyHeights checks that the block rows run from the first one to the
// tip without a gap, decode, and that the tip names the last one.
func (d *DB) verifyHeights(tip Tip, hasTip bool, report func(string, ...any) bool) error {
	var (
		first, last uint32
		lastHash    = tip.Hash
		n           int64
	)
	err := d.iterate(CFHeight, nil, nil, func(k, v []byte) (bool, error) {
		h, err := unpackHeightKey(k)
		if err != nil {
			return report("block row key %x does not decode: %v", k, err), nil
		}
		if n > 0 && h != last+1 && !report("block rows jump from height %d to %d", last, h) {
			return false, nil
		}
		if n == 0 {
			first = h
		}
		last, n = h, n+1
		m, err := unpackBlockMeta(v)
		if err != nil {
			lastHash = bchain.Hash{}
			return report("block row at height %d does not decode: %v", h, err), nil
		}
		lastHash = m.Hash
		return true, nil
	})
	if err != nil {
		report("the block rows cannot be read through: %v", err)
		return nil
	}
	switch {
	case !hasTip && n > 0:
		report("%d block rows (heights %d-%d) but no tip record", n, first, last)
	case hasTip && n == 0:
		report("the tip is block %d but there are no block rows", tip.Height)
	case hasTip && last != tip.Height:
		report("the tip is block %d but the block rows end at %d", tip.Height, last)
	case hasTip && lastHash != tip.Hash:
		report("the tip block %d is %s but its block row says %s", tip.Height, tip.Hash, lastHash)
	}
	return nil
}
