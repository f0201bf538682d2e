package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
)

const ckptUser, ckptPassword = "admin", "ckpt-secret"

// checkpointAnswer is the answer of POST /admin/checkpoint.
type checkpointAnswer struct {
	Dir            string `json:"dir"`
	Height         uint32 `json:"height"`
	Hash           string `json:"hash"`
	Files          int    `json:"files"`
	Bytes          int64  `json:"bytes"`
	HardLinked     bool   `json:"hardLinked"`
	TookMs         int64  `json:"tookMs"`
	WritesPausedMs int64  `json:"writesPausedMs"`
	Error          string `json:"error"`
}

// postCheckpoint asks the internal server for a checkpoint into dir; it
// returns the status code and the answer.
func postCheckpoint(t *testing.T, internal, dir string, auth bool) (int, checkpointAnswer) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"dir": dir})
	req, err := http.NewRequest(http.MethodPost, internal+"/admin/checkpoint", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.SetBasicAuth(ckptUser, ckptPassword)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var a checkpointAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("checkpoint answer %d %s: %v", resp.StatusCode, data, err)
	}
	return resp.StatusCode, a
}

// connectedBlocks reads how many blocks this process has connected.
func connectedBlocks(t *testing.T, internal string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^blockbook_index_blocks_connected_total (\d+)$`).FindStringSubmatch(metricsText(t, internal))
	if m == nil {
		t.Fatal("no blockbook_index_blocks_connected_total in /metrics")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// indexTipOf opens a closed index read-only and returns its tip.
func indexTipOf(t *testing.T, dir string) db.Tip {
	t.Helper()
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest", ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer d.Close()
	tip, ok, err := db.ReadTip(d)
	if err != nil || !ok {
		t.Fatalf("tip of %s: %v %v", dir, ok, err)
	}
	return tip
}

// TestE2ECheckpoint bootstraps new hosts from checkpoints of a running
// indexer: one taken in the middle of a bulk sync (the node frozen with
// SIGSTOP once a round past the start has been committed, so the sync is
// certainly not over), one in steady state. Each is copied into a datadir
// of its own, started against the node, and must continue from the
// checkpoint's height (its connected-blocks counter counts only the rest)
// to the tip, ending byte-identical to the source index and to a fresh
// sync. Bad requests get a 4xx, and -checkpoint does the same for a
// stopped index.
//
// Long: one scenario, as each step needs the indexes of the previous ones.
func TestE2ECheckpoint(t *testing.T) {
	t.Setenv("BB_ADMIN_USER", ckptUser)
	t.Setenv("BB_ADMIN_PASSWORD", ckptPassword)
	ctx := context.Background()
	t0 := time.Now()
	lap := func(what string) { t.Logf("%6.1fs %s", time.Since(t0).Seconds(), what) }
	defer lap("end")
	node := startNode(t)
	g := demoChain(t)
	if err := g.Extend(150, 30); err != nil {
		t.Fatal(err)
	}
	h2, hash2 := g.Tip()
	submit(t, g, node, 1)
	lap("chain made")
	cfg := writeConfig(t, node, nil)
	bulk := func(o *app.Options) { o.BulkThreshold = 50 }
	dirA := filepath.Join(t.TempDir(), "a")
	a := startInProcess(t, cfg, dirA, bulk)
	midHeight := waitRoundPast(t, a, 0, uint32(h2))
	// The node frozen, the sync cannot finish before the checkpoint.
	if err := node.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := true
	thaw := func() {
		if frozen {
			frozen = false
			if err := node.Signal(syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(thaw) // before the node's own cleanup stops it
	ckptMid := filepath.Join(t.TempDir(), "mid")
	code, mid := postCheckpoint(t, a.internal, ckptMid, true)
	thaw()
	if code != 200 || mid.Height < midHeight || mid.Height >= uint32(h2) {
		t.Fatalf("checkpoint during the bulk sync (a round committed at %d): %d %+v\n%s", midHeight, code, mid, tail(a.logs.String(), 20))
	}
	if mid.Hash != g.Blocks()[mid.Height].BlockHash().String() || !mid.HardLinked || mid.Files == 0 || mid.Bytes == 0 {
		t.Fatalf("checkpoint answer %+v", mid)
	}
	t.Logf("checkpoint during the bulk sync: height %d, %d files, %d bytes, %d ms (writes paused %d ms)",
		mid.Height, mid.Files, mid.Bytes, mid.TookMs, mid.WritesPausedMs)
	waitTip(t, a.base, h2, hash2.String(), a.logs)

	lap("synced")
	ckptSteady := filepath.Join(t.TempDir(), "steady")
	code, steady := postCheckpoint(t, a.internal, ckptSteady, true)
	if code != 200 || steady.Height != uint32(h2) || steady.Hash != hash2.String() {
		t.Fatalf("checkpoint in steady state: %d %+v", code, steady)
	}
	checkCheckpointRefusals(t, a.internal, ckptSteady)

	// The chain moves on; the new hosts must follow it from their
	// checkpoints.
	if err := g.Extend(20, 4); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, h2+1)
	h3, hash3 := g.Tip()
	lap("extended")
	hosts := map[string]uint32{"mid": mid.Height, "steady": steady.Height}
	dirs := map[string]string{}
	for name, src := range map[string]string{"mid": ckptMid, "steady": ckptSteady} {
		dir := filepath.Join(t.TempDir(), name)
		copyDir(t, src, dir) // as rsync or tar would carry it to another host
		if tip := indexTipOf(t, dir); tip.Height != hosts[name] {
			t.Fatalf("%s checkpoint holds tip %d, answered %d", name, tip.Height, hosts[name])
		}
		inst := startInProcess(t, cfg, dir, bulk)
		waitTip(t, inst.base, h3, hash3.String(), inst.logs)
		if n := connectedBlocks(t, inst.internal); n != int(uint32(h3)-hosts[name]) {
			t.Fatalf("host from the %s checkpoint (height %d) connected %d blocks to reach %d: not a continuation\n%s",
				name, hosts[name], n, h3, tail(inst.logs.String(), 20))
		}
		inst.stop(t)
		lap(name + " host synced")
		dirs[name] = dir
	}
	waitTip(t, a.base, h3, hash3.String(), a.logs)
	a.stop(t)

	// -checkpoint on the stopped index.
	ckptStopped := filepath.Join(t.TempDir(), "stopped")
	o := &app.Options{BlockchainCfg: cfg, DataDir: dirA, Checkpoint: ckptStopped, Public: "none", Internal: "none",
		Workers: 1, DBCache: 32 << 20, DBMaxOpenFiles: 256, Rollback: -1, SyncMemoryMB: 64, LogFormat: "text"}
	if err := app.Run(ctx, o, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("-checkpoint: %v", err)
	}
	if tip := indexTipOf(t, ckptStopped); tip.Height != uint32(h3) {
		t.Fatalf("-checkpoint holds %d, want %d", tip.Height, h3)
	}

	lap("-checkpoint")
	ref := referenceIndex(t, cfg, h3, hash3.String())
	lap("reference")
	compareIndexes(t, dirA, ref)
	compareIndexes(t, dirs["mid"], dirA)
	compareIndexes(t, dirs["steady"], dirA)
	compareIndexes(t, ckptStopped, dirA)
}

// waitRoundPast waits until the indexer is in its bulk sync and has
// committed a round past from (but not reached to); it returns the height.
func waitRoundPast(t *testing.T, inst *instance, from, to uint32) uint32 {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var st status
		if code, _ := tryGet(inst.base+"/api/v2", &st); code == 200 {
			b := st.Blockbook
			if b.BestHeight >= to {
				t.Fatalf("the bulk sync finished before a checkpoint could be taken in it (rounds too large for the chain)\n%s", tail(inst.logs.String(), 20))
			}
			if b.InitialSync && b.BestHeight > from {
				return b.BestHeight
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no bulk round committed past %d\n%s", from, tail(inst.logs.String(), 20))
	return 0
}

// checkCheckpointRefusals sends the bad requests: each gets a 4xx that
// says why, and nothing is written.
func checkCheckpointRefusals(t *testing.T, internal, existing string) {
	t.Helper()
	fresh := filepath.Join(t.TempDir(), "never")
	for _, c := range []struct {
		name, dir string
		auth      bool
		want      int
		says      string
	}{
		{"no auth", fresh, false, 401, "Unauthorized"},
		{"existing directory", existing, true, 400, "already exists"},
		{"relative path", "ckpt/new", true, 400, "not an absolute path"},
		{"path traversal", filepath.Dir(fresh) + "/../" + filepath.Base(filepath.Dir(fresh)) + "/never", true, 400, "not a clean path"},
		{"no parent", filepath.Join(fresh, "deeper", "ckpt"), true, 400, "does not exist"},
		{"empty", "", true, 400, "JSON object"},
	} {
		code, a := postCheckpoint(t, internal, c.dir, c.auth)
		if code != c.want || !strings.Contains(a.Error, c.says) {
			t.Errorf("%s (%q): %d %q, want %d saying %q", c.name, c.dir, code, a.Error, c.want, c.says)
		}
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after refused requests: %v", fresh, err)
	}
	resp, err := httpClient.Get(internal + "/admin/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("GET without auth: %d", resp.StatusCode)
	}
}

// TestDocsLoadBalancerConfigs checks the HAProxy and nginx examples of
// docs/operations.md ("Multi-host deployment") with the balancers' own
// checkers, when they are installed.
func TestDocsLoadBalancerConfigs(t *testing.T) {
	data, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start, end := strings.Index(doc, "## Multi-host deployment"), strings.Index(doc, "## Crashes, restarts and reorgs")
	if start < 0 || end < start {
		t.Fatal("docs/operations.md has no Multi-host deployment section before Crashes, restarts and reorgs")
	}
	section := doc[start:end]
	block := func(lang string) string {
		m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(section)
		if m == nil {
			t.Fatalf("no %s example in the Multi-host deployment section", lang)
		}
		return m[1]
	}
	haproxyCfg, nginxCfg := block("haproxy"), block("nginx")
	if !strings.Contains(haproxyCfg, "uri /health") || !strings.Contains(haproxyCfg, "check port 9030") {
		t.Error("the HAProxy example does not check /health on the internal port")
	}
	dir := t.TempDir()
	// Both are installed by `make deps`; without them the check is skipped,
	// except in CI, where a missing one is a missing install step.
	ran := 0
	if bin := lookTool(t, "haproxy"); bin != "" {
		ran++
		path := filepath.Join(dir, "haproxy.cfg")
		writeFile(t, path, haproxyCfg)
		if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
			t.Errorf("haproxy -c on the example: %v\n%s", err, out)
		}
	}
	if bin := lookTool(t, "nginx"); bin != "" {
		ran++
		// The example is a site (http context), as in /etc/nginx/sites-enabled.
		writeFile(t, filepath.Join(dir, "site.conf"), nginxCfg)
		writeFile(t, filepath.Join(dir, "nginx.conf"), "pid nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\n    include site.conf;\n}\n")
		if out, err := exec.Command(bin, "-t", "-q", "-p", dir+"/", "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr").CombinedOutput(); err != nil {
			t.Errorf("nginx -t on the example: %v\n%s", err, out)
		}
	}
	if ran == 0 {
		t.Skip("neither haproxy nor nginx is installed")
	}
}

// lookTool is the path of a program, or "" when it is not installed; under
// CI=true a missing one fails the test instead.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil && os.Getenv("CI") == "true" {
		t.Errorf("%s is not installed (scripts/install-deps.sh test installs it)", name)
	}
	if err != nil {
		return ""
	}
	return bin
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
