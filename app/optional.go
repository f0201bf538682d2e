package app

import (
	"fmt"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/pushdata"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
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
	if err := enableRunes(e, x); err != nil {
		return err
	}
	return enableSilentPayments(e, x)
}

// runesNetworks maps the Bitcoin coins' names to their runes network
// (activation height and name unlocking).
var runesNetworks = map[string]runestone.Network{
	"Bitcoin": runestone.Mainnet, "Testnet": runestone.Testnet3, "Testnet4": runestone.Testnet4,
	"Signet": runestone.Signet, "Regtest": runestone.Regtest,
}

// enableRunes switches the Runes index on for Bitcoin networks.
func enableRunes(e stackEnv, x *db.UtxoIndex) error {
	want := e.o.RunesIndex || e.cfg.RunesIndex
	net, bitcoin := runesNetworks[e.cfg.CoinName]
	if want && !bitcoin {
		return fmt.Errorf("-runesindex (runes_index): runes live on Bitcoin networks only, not on %s", e.cfg.CoinName)
	}
	if !bitcoin {
		return nil
	}
	on, err := x.EnableOptional(runes.New(e.d, net), want)
	if err != nil {
		return fmt.Errorf("-runesindex (runes_index): %w", err)
	}
	if on && !want {
		e.log.Info("the index keeps the runes rows it was built with (-runesindex)")
	}
	return nil
}
