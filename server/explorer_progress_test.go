package server

import (
	"context"
	"html"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

type syncingFake struct {
	explorerFake
	progress *api.SyncProgress
}

func (f *syncingFake) Status(context.Context) (*api.SystemInfo, error) {
	return &api.SystemInfo{Blockbook: &api.BlockbookInfo{BestHeight: 250_000, InitialSync: f.progress != nil, SyncProgress: f.progress},
		Backend: &api.BackendInfo{Blocks: 850_000}}, nil
}

func (f *syncingFake) Blocks(context.Context, int, int) (*api.Blocks, error) {
	return &api.Blocks{}, nil
}

// While the index is behind, the start page shows a progress bar of the
// index's height over the node's with the rate and the time left; once in
// sync, none.
func TestExplorerSyncProgress(t *testing.T) {
	eta := int64(2 * 3600)
	for _, c := range []struct {
		progress *api.SyncProgress
		want     []string
	}{
		{&api.SyncProgress{BlocksLeft: 600_000, BlocksPerSecond: 83.3, EtaSeconds: &eta},
			[]string{`<progress id="sync-progress" aria-label="Sync progress" max="850000" value="250000">`, "600,000 blocks left at 83.3 a second, about 2 hours more"}},
		{&api.SyncProgress{BlocksLeft: 600_000}, []string{`<progress id="sync-progress"`, `600,000 blocks left</span>`}},
		{nil, nil},
	} {
		p := NewPublic(&syncingFake{progress: c.progress}, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != 200 {
			t.Fatalf("status %d:\n%s", rec.Code, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("progress %+v: the page lacks %q", c.progress, w)
			}
		}
		if c.progress == nil && strings.Contains(body, "sync-progress") {
			t.Error("a progress bar while in sync")
		}
	}
}
