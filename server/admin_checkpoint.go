package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// CheckpointResult is the answer of POST /admin/checkpoint: where the
// checkpoint went, the last block it holds, its files, and the time it
// took (WritesPausedMs of which the index writer waited).
type CheckpointResult struct {
	Dir            string `json:"dir"`
	Height         uint32 `json:"height"`
	Hash           string `json:"hash"`
	Files          int    `json:"files"`
	Bytes          int64  `json:"bytes"`
	HardLinked     bool   `json:"hardLinked"`
	TookMs         int64  `json:"tookMs"`
	WritesPausedMs int64  `json:"writesPausedMs"`
}

// Checkpointer takes a checkpoint of the index into dir. An error wrapping
// ErrCheckpointTarget is the caller's (answered 400), any other the
// server's (500).
type Checkpointer func(dir string) (CheckpointResult, error)

// ErrCheckpointTarget marks a checkpoint directory the index refuses.
var ErrCheckpointTarget = errors.New("bad checkpoint directory")

// checkpointRequest is the body of POST /admin/checkpoint.
type checkpointRequest struct {
	Dir string `json:"dir"`
}

// checkpoint serves POST /admin/checkpoint {"dir":"/abs/new/dir"}; it
// answers once the checkpoint is complete.
func (a *admin) checkpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Method not allowed: POST {\"dir\":\"/absolute/new/directory\"}"})
		return
	}
	if a.cfg.Checkpoint == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"This server cannot take checkpoints"})
		return
	}
	var body checkpointRequest
	data, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil || json.Unmarshal(data, &body) != nil || body.Dir == "" {
		writeJSON(w, http.StatusBadRequest, errorBody{`Body must be a JSON object {"dir":"/absolute/new/directory"}`})
		return
	}
	// A copy to another filesystem can outlast the internal server's write
	// timeout; the answer must still arrive (best effort: a wrapper that
	// hides the connection keeps the timeout, the log still reports it).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	res, err := a.cfg.Checkpoint(body.Dir)
	switch {
	case errors.Is(err, ErrCheckpointTarget):
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, errorBody{"Checkpoint failed: " + err.Error()})
	default:
		writeJSON(w, http.StatusOK, res)
	}
}
