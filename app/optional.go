package app

import (
	"fmt"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/pushdata"
)

// enableOptionalIndexes switches on the optional indexes the flags and
// the config ask for (db.OptionalIndex). An index a datadir was built
// with stays on without them; one asked for over a datadir built without
// it refuses to start, naming its flag. A replica only reads: the API
// learns from the datadir's state keys which indexes it holds.
func enableOptionalIndexes(e stackEnv, x *db.UtxoIndex) error {
	if e.d.ReadOnly() {
		return nil
	}
	if err := enableAddressPrefix(e, x); err != nil {
		return err
	}
	want := e.o.PushdataIndex || e.cfg.PushdataIndex
	on, err := x.EnableOptional(pushdata.Index{}, want)
	if err != nil {
		return fmt.Errorf("-pushdataindex (pushdata_index): %w", err)
	}
	if on && !want {
		e.log.Info("the index keeps the pushdata rows it was built with (-pushdataindex)")
	}
	return enableSilentPayments(e, x)
}
