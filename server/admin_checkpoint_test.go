package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The handler maps the checkpointer's answers: the caller's mistakes are
// 400, the server's 500, a taken checkpoint 200 with its description.
func TestAdminCheckpoint(t *testing.T) {
	var got []string
	cp := func(dir string) (CheckpointResult, error) {
		got = append(got, dir)
		switch dir {
		case "/exists":
			return CheckpointResult{}, fmt.Errorf("%w: /exists already exists", ErrCheckpointTarget)
		case "/broken":
			return CheckpointResult{}, errors.New("disk full")
		}
		return CheckpointResult{Dir: dir, Height: 7, Hash: "ab", Files: 3, Bytes: 99, HardLinked: true}, nil
	}
	i := NewInternal("127.0.0.1:0", prometheus.NewRegistry(), nil, nil, 1, slog.New(slog.DiscardHandler))
	i.Admin(AdminConfig{User: "admin", Password: "pw", Checkpoint: cp})
	none := NewInternal("127.0.0.1:0", prometheus.NewRegistry(), nil, nil, 1, slog.New(slog.DiscardHandler))
	none.Admin(AdminConfig{User: "admin", Password: "pw"})
	for _, tc := range []struct {
		srv          *Internal
		method, body string
		auth         bool
		want         int
		wantErr      string
	}{
		{i, "POST", `{"dir":"/ok"}`, false, http.StatusUnauthorized, "Unauthorized"},
		{i, "GET", "", true, http.StatusMethodNotAllowed, "POST"},
		{i, "POST", `not json`, true, http.StatusBadRequest, "JSON object"},
		{i, "POST", `{"directory":"/ok"}`, true, http.StatusBadRequest, "JSON object"},
		{i, "POST", `{"dir":"/exists"}`, true, http.StatusBadRequest, "already exists"},
		{i, "POST", `{"dir":"/broken"}`, true, http.StatusInternalServerError, "disk full"},
		{none, "POST", `{"dir":"/ok"}`, true, http.StatusNotFound, "cannot take checkpoints"},
		{i, "POST", `{"dir":"/ok"}`, true, http.StatusOK, ""},
	} {
		r := httptest.NewRequest(tc.method, "/admin/checkpoint", strings.NewReader(tc.body))
		if tc.auth {
			r.SetBasicAuth("admin", "pw")
		}
		w := httptest.NewRecorder()
		tc.srv.srv.Handler.ServeHTTP(w, r)
		if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.wantErr) {
			t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.body, w.Code, w.Body.String(), tc.want, tc.wantErr)
		}
		if tc.want == http.StatusOK {
			var res CheckpointResult
			if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.Dir != "/ok" || res.Height != 7 || !res.HardLinked {
				t.Errorf("answer %s (%v)", w.Body.String(), err)
			}
		}
	}
	if strings.Join(got, " ") != "/exists /broken /ok" {
		t.Errorf("checkpointer called with %v: unauthenticated or malformed requests must not reach it", got)
	}
}
