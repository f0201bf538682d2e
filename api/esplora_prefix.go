package api

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/db"
)

// AddressesWithPrefix answers Esplora's address search from the
// addressPrefix rows (an index built with -esploraaddressprefix): up to
// limit indexed addresses beginning with prefix, sorted.
func (s *UtxoService) AddressesWithPrefix(_ context.Context, prefix string, limit int) ([]string, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	out, err := db.AddressesWithPrefix(v.snap, prefix, limit)
	if err != nil {
		return nil, fmt.Errorf("address prefix %q: %w", prefix, err)
	}
	return out, nil
}
