package btc_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// The generic codec with no overrides must decode real blocks exactly as
// the Bitcoin parser does, since coin packages build on it.
func TestParseBlockWithMatchesParseBlock(t *testing.T) {
	p := ptParser()
	for i := range ptMainnetBlocks {
		fx := &ptMainnetBlocks[i]
		t.Run(fmt.Sprint(fx.height), func(t *testing.T) {
			raw := ptLoad(t, fx.file)
			want, err := p.ParseBlock(raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := btc.ParseBlockWith(raw, btc.BlockCodec{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal("ParseBlockWith differs from ParseBlock")
			}
		})
	}
}

func TestParseBlockWithMalformed(t *testing.T) {
	raw := ptLoad(t, ptMainnetBlocks[0].file)
	cases := map[string][]byte{
		"short header":   raw[:79],
		"no tx count":    raw[:80],
		"huge tx count":  append(append([]byte{}, raw[:80]...), 0xfe, 0xff, 0xff, 0xff, 0x7f),
		"truncated tx":   raw[:len(raw)-1],
		"trailing bytes": append(append([]byte{}, raw...), 0),
	}
	for name, b := range cases {
		if _, err := btc.ParseBlockWith(b, btc.BlockCodec{}); !errors.Is(err, bchain.ErrInvalidData) {
			t.Errorf("%s: err %v, want ErrInvalidData", name, err)
		}
	}
	trailer := func(rest []byte, blk *bchain.Block) error {
		if len(rest) != 1 {
			return fmt.Errorf("want 1 byte, got %d", len(rest))
		}
		return nil
	}
	if _, err := btc.ParseBlockWith(cases["trailing bytes"], btc.BlockCodec{Trailer: trailer}); err != nil {
		t.Errorf("trailer: %v", err)
	}
}
