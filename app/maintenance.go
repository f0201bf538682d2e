package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/openexplorer/blockbook/db"
)

// computeDBStats prints the rows and key and value bytes of each column
// family and the database size on disk (-computedbstats; the program then
// exits, as Blockbook's does).
func computeDBStats(ctx context.Context, d *db.DB, w io.Writer, log *slog.Logger) error {
	log.Info("computing column statistics (a full scan of the index)")
	stats, err := d.ColumnStats(ctx)
	if err != nil {
		return err
	}
	// The tabwriter buffers until Flush, which reports any write error.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintln(tw, "column family\trows\tkey bytes\tvalue bytes\ttotal bytes\ton disk\t")
	var rows, total int64
	for _, s := range stats {
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", s.CF, s.Rows, s.KeyBytes, s.ValueBytes, s.KeyBytes+s.ValueBytes, diskColumn(s.DiskBytes))
		rows += s.Rows
		total += s.KeyBytes + s.ValueBytes
	}
	_, _ = fmt.Fprintf(tw, "all\t%d\t\t\t%d\t\t\n", rows, total)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the statistics: %w", err)
	}
	log.Info("database size", "on_disk_bytes", d.Size(), "computed_bytes", total, "rows", rows)
	return nil
}

// diskColumn is a family's on-disk bytes, or "-" where the engine does
// not know them.
func diskColumn(n int64) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// verifyIndex checks the index (-repair, -fixutxo, -forcerepair) and
// reports each problem or that nothing needs repair. A damaged index is
// an error: it cannot be mended in place, only rolled back past the damage
// (-rollback) or resynced into a new datadir. Opening the index has
// already completed any bulk-load round a crash interrupted.
func verifyIndex(ctx context.Context, d *db.DB, log *slog.Logger) error {
	log.Info("verifying the index (a full scan)", "path", d.Path())
	problems, err := d.Verify(ctx)
	if err != nil {
		return fmt.Errorf("verifying the index: %w", err)
	}
	for _, p := range problems {
		log.Error("index damaged", "problem", p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the index has %d problem(s) (listed above); roll it back below the damage with -rollback or resync into a new datadir", len(problems))
	}
	log.Info("index verified: nothing needs repair")
	return nil
}
