package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/server"
)

// checkpointer takes checkpoints of the open index for POST
// /admin/checkpoint, mapping the index's refusals of a directory to the
// server's 400.
func checkpointer(d *db.DB) server.Checkpointer {
	return func(dir string) (server.CheckpointResult, error) {
		info, err := d.Checkpoint(dir)
		if errors.Is(err, db.ErrCheckpointTarget) {
			return server.CheckpointResult{}, fmt.Errorf("%w: %w", server.ErrCheckpointTarget, err)
		}
		if err != nil {
			return server.CheckpointResult{}, err
		}
		return checkpointResult(info), nil
	}
}

func checkpointResult(info db.CheckpointInfo) server.CheckpointResult {
	res := server.CheckpointResult{Dir: info.Dir, Files: info.Files, Bytes: info.Bytes, HardLinked: info.SameFilesystem,
		TookMs: info.Took.Milliseconds(), WritesPausedMs: info.Paused.Milliseconds()}
	if info.HasTip {
		res.Height, res.Hash = info.Tip.Height, info.Tip.Hash.String()
	}
	return res
}

// takeCheckpoint is -checkpoint=<dir>: a checkpoint of the stopped index
// of -datadir (opening it has completed any interrupted bulk round), with
// its description as one JSON line on w; the program then exits. A
// relative dir is taken from the working directory.
func takeCheckpoint(d *db.DB, dir string, w io.Writer, log *slog.Logger) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("-checkpoint %s: %w", dir, err)
	}
	log.Info("taking a checkpoint of the index", "datadir", d.Path(), "dir", abs)
	info, err := d.Checkpoint(abs)
	if err != nil {
		return fmt.Errorf("-checkpoint: %w", err)
	}
	line, err := json.Marshal(checkpointResult(info))
	if err != nil {
		return fmt.Errorf("-checkpoint: %w", err)
	}
	if _, err := fmt.Fprintf(w, "%s\n", line); err != nil {
		return fmt.Errorf("-checkpoint: writing the result: %w", err)
	}
	return nil
}
