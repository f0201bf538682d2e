package app

import (
	"context"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/fourbyte"
)

// startFourByte fills the index's function signatures (parsedData):
// the standard contracts' ABIs at every start, and with the config's
// fourByteSignatures the 4-byte directory downloader, which runs until
// ctx ends. Both write, so a read-only index (a replica) does neither and
// serves what the primary stored; the downloader runs only with -sync, in
// the process that writes the index, as the fiat downloader.
func startFourByte(ctx context.Context, wg *sync.WaitGroup, e stackEnv) {
	if (e.backend.Type != bchain.ChainEthereumType && e.backend.Type != bchain.ChainTronType) || e.d.ReadOnly() {
		return
	}
	log := e.log.With("subsystem", "fourbyte")
	if n, err := e.d.WriteStandardSignatures(); err != nil {
		log.Warn("storing the standard contracts' function signatures failed", "err", err)
	} else if n > 0 {
		log.Info("stored the standard contracts' function signatures", "signatures", n)
	}
	if e.cfg.FourByteSignatures == "" {
		return
	}
	if !e.o.Sync {
		log.Info("4-byte signatures are served from the index but not downloaded (run with -sync to download them)")
		return
	}
	dl, err := fourbyte.New(e.d, fourbyte.Config{URL: e.cfg.FourByteSignatures, Log: e.log})
	if err != nil { // the config's check refuses such URLs at start
		log.Error("4-byte signature downloader not started", "err", err)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = dl.Run(ctx)
	}()
}
