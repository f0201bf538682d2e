package e2e

// Harness for the end-to-end tests: a real btcd regtest node fed with a
// deterministic chain (tools/chaingen), and the blockbook program run either
// in-process (run) or as a child process (this test binary re-executed as
// blockbook, for kill -9 tests).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// childEnv makes the test binary behave as the blockbook program.
const childEnv = "BLOCKBOOK_E2E_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(app.Main(os.Args[1:], app.Build{}))
	}
	if plan := os.Getenv(victimEnv); plan != "" {
		os.Exit(runVictim(plan))
	}
	code := m.Run()
	removeLtcTemplate()
	// With the whole suite run, every websocket method must have a test.
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		if missing := uncoveredWebsocketMethods(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: websocket methods without a test: %v\n", missing)
			code = 1
		}
	}
	os.Exit(code)
}

// waitFor is a failure guard for event-driven waits, not a speed assertion.
const waitFor = 90 * time.Second

func startNode(t testing.TB) *regtest.Node {
	t.Helper()
	return startNodeWith(t, regtest.Options{})
}

// startNodeWith starts btcd with options (Dir is filled in).
func startNodeWith(t testing.TB, o regtest.Options) *regtest.Node {
	t.Helper()
	o.Dir = t.TempDir()
	node, err := regtest.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop() })
	return node
}

func demoChain(t testing.TB) *chaingen.Generator {
	t.Helper()
	g := chaingen.New(&chaincfg.RegressionNetParams, "e2e")
	if err := g.Demo(chaingen.DefaultDemo()); err != nil {
		t.Fatal(err)
	}
	return g
}

func submit(t testing.TB, g *chaingen.Generator, node *regtest.Node, from int32) {
	t.Helper()
	if err := g.Submit(context.Background(), node, from); err != nil {
		t.Fatalf("submit from %d: %v\n%s", from, err, node.LogTail(20))
	}
}

// demoStack is a btcd node holding the demo chain and a blockbook synced to
// it; the config and datadir are returned for tests that restart it.
type demoStack struct {
	node    *regtest.Node
	g       *chaingen.Generator
	inst    *instance
	cfg     string
	dataDir string
}

func startDemoStack(t testing.TB, cfgExtra map[string]any) *demoStack {
	t.Helper()
	return startDemoStackWith(t, cfgExtra, nil)
}

// startDemoStackWith is startDemoStack with flags changed by mod.
func startDemoStackWith(t testing.TB, cfgExtra map[string]any, mod func(*app.Options)) *demoStack {
	t.Helper()
	st := &demoStack{node: startNode(t), g: demoChain(t), dataDir: t.TempDir()}
	submit(t, st.g, st.node, 1)
	st.cfg = writeConfig(t, st.node, cfgExtra)
	st.inst = startInProcess(t, st.cfg, st.dataDir, mod)
	h, hash := st.g.Tip()
	waitTip(t, st.inst.base, h, hash.String(), st.inst.logs)
	return st
}

// writeConfig writes a blockchaincfg.json for the Regtest coin.
func writeConfig(t testing.TB, node *regtest.Node, extra map[string]any) string {
	t.Helper()
	cfg := map[string]any{
		"coin_name": "Regtest", "coin_shortcut": "rBTC", "coin_label": "Bitcoin Regtest",
		"rpc_url": node.RPCURL, "rpc_user": node.RPCUser, "rpc_pass": node.RPCPass, "rpc_timeout": 25,
		"parse": true, "block_addresses_to_keep": 300,
	}
	for k, v := range extra {
		cfg[k] = v
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "blockchaincfg.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// instance is a blockbook running in-process.
type instance struct {
	base, internal string
	dataDir        string
	logs           *syncbuf.Buffer
	cancel         context.CancelFunc
	done           chan error
	stopped        bool
}

// startInProcess runs the program with -sync on free loopback ports.
func startInProcess(t testing.TB, cfgPath, dataDir string, mod func(*app.Options)) *instance {
	t.Helper()
	inst := &instance{dataDir: dataDir, logs: &syncbuf.Buffer{}, done: make(chan error, 1)}
	addrs := make(chan [2]string, 2)
	o := &app.Options{
		BlockchainCfg: cfgPath, DataDir: dataDir, Sync: true, Public: "127.0.0.1:0", Internal: "127.0.0.1:0",
		Workers: 2, DBCache: 32 << 20, DBMaxOpenFiles: 256, Rollback: -1, SyncMemoryMB: 64, LogFormat: "text",
		OnListen:   func(name, addr string) { addrs <- [2]string{name, addr} },
		NFTGateway: nftGateway(), // a double: no test reads the Internet (eth_nft_test.go)
	}
	if mod != nil {
		mod(o)
	}
	log := slog.New(slog.NewTextHandler(inst.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	inst.cancel = cancel
	go func() { inst.done <- app.Run(ctx, o, log) }()
	want := 0
	if o.Public != "none" {
		want++
	}
	if o.Internal != "none" {
		want++
	}
	for i := 0; i < want; i++ {
		select {
		case a := <-addrs:
			if a[0] == "public" {
				inst.base = "http://" + a[1]
			} else {
				inst.internal = "http://" + a[1]
			}
		case err := <-inst.done:
			t.Fatalf("blockbook exited: %v\n%s", err, inst.logs)
		case <-time.After(waitFor):
			t.Fatalf("blockbook did not start\n%s", inst.logs)
		}
	}
	t.Cleanup(func() { inst.stop(t) })
	return inst
}

// stop shuts the instance down and waits until its database is closed.
func (i *instance) stop(t testing.TB) {
	if i.stopped {
		return
	}
	i.stopped = true
	i.cancel()
	select {
	case err := <-i.done:
		if err != nil {
			t.Errorf("blockbook exited with error: %v\n%s", err, i.logs)
		}
	case <-time.After(waitFor):
		t.Fatalf("blockbook did not stop\n%s", i.logs)
	}
}

// status is the part of /api/v2 the tests look at.
type status struct {
	Blockbook struct {
		BestHeight  uint32 `json:"bestHeight"`
		InSync      bool   `json:"inSync"`
		InitialSync bool   `json:"initialSync"`
	} `json:"blockbook"`
	Backend struct {
		Error string `json:"error"`
	} `json:"backend"`
}

// waitTip waits until the index's tip is the given block.
func waitTip(t testing.TB, base string, height int32, hash string, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var bi struct {
			BlockHash string `json:"blockHash"`
		}
		var st status
		if code, _ := tryGet(base+"/api/v2", &st); code == 200 && st.Blockbook.BestHeight == uint32(height) {
			if code, _ := tryGet(fmt.Sprintf("%s/api/v2/block-index/%d", base, height), &bi); code == 200 && bi.BlockHash == hash {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("index did not reach %d %s\n%s", height, hash, tail(logs.String(), 40))
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// tryGet fetches url and decodes JSON into out; it returns the status code.
func tryGet(url string, out any) (int, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s: %v: %s", url, err, body)
		}
	}
	return resp.StatusCode, nil
}

// getJSON fetches url, requiring status want.
func getJSON(t testing.TB, url string, want int, out any) {
	t.Helper()
	code, err := tryGet(url, out)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if code != want {
		t.Fatalf("GET %s: status %d, want %d", url, code, want)
	}
}

// compareIndexes opens two closed index directories and requires them to be
// byte-identical (all column families but caches and volatile state).
func compareIndexes(t testing.TB, dirA, dirB string) {
	t.Helper()
	compareIndexesOf(t, db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest"}, dirA, dirB)
}

// compareIndexesOf is compareIndexes for the chain o names (o.Path unset).
func compareIndexesOf(t testing.TB, o db.Options, dirA, dirB string) {
	t.Helper()
	open := func(dir string) *db.DB {
		o.Path = dir
		d, err := rocksdb.Open(o)
		if err != nil {
			t.Fatalf("open %s: %v", dir, err)
		}
		return d
	}
	a, b := open(dirA), open(dirB)
	defer a.Close()
	defer b.Close()
	diffs, err := db.Diff(a, b, db.ColumnFamilies(o.ChainType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if len(diffs) > 0 {
		t.Fatalf("indexes %s and %s differ", dirA, dirB)
	}
}

// referenceIndex syncs a fresh index of node's current chain and returns its
// directory (closed).
func referenceIndex(t testing.TB, cfgPath string, height int32, hash string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reference")
	ref := startInProcess(t, cfgPath, dir, nil)
	waitTip(t, ref.base, height, hash, ref.logs)
	ref.stop(t)
	return dir
}

// child is blockbook running as a separate process.
type child struct {
	cmd  *exec.Cmd
	logs *syncbuf.Buffer
	base string
	done chan struct{}
	err  error
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startChild runs this test binary as blockbook with extra flags and
// environment variables (NAME=value).
func startChild(t testing.TB, cfgPath, dataDir string, extra ...string) *child {
	t.Helper()
	addr := freePort(t)
	c := &child{logs: &syncbuf.Buffer{}, base: "http://" + addr, done: make(chan struct{})}
	args := []string{"-blockchaincfg=" + cfgPath, "-datadir=" + dataDir, "-sync",
		"-public=" + addr, "-internal=none", "-workers=2", "-dbcache=33554432", "-syncmemory=64"}
	var env []string
	for _, e := range extra {
		if strings.HasPrefix(e, "-") {
			args = append(args, e)
		} else {
			env = append(env, e)
		}
	}
	c.cmd = exec.Command(os.Args[0], args...)
	c.cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// wait waits for the child to exit.
func (c *child) wait(t testing.TB) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(waitFor):
		t.Fatalf("blockbook child did not exit\n%s", tail(c.logs.String(), 30))
	}
}

// killedBySignal reports whether the child died from SIGKILL.
func (c *child) killedBySignal() bool {
	return c.cmd.ProcessState != nil && strings.Contains(c.cmd.ProcessState.String(), "killed")
}

func waitBriefly() { time.Sleep(50 * time.Millisecond) }

// startInProcessRollback runs the program with -rollback=height; the channel
// yields its result.
func startInProcessRollback(t testing.TB, cfgPath, dataDir string, height uint32) <-chan error {
	t.Helper()
	o := &app.Options{BlockchainCfg: cfgPath, DataDir: dataDir, Public: "none", Internal: "none", Workers: 1,
		DBCache: 32 << 20, DBMaxOpenFiles: 256, Rollback: int64(height), SyncMemoryMB: 64, LogFormat: "text"}
	done := make(chan error, 1)
	go func() { done <- app.Run(context.Background(), o, slog.New(slog.DiscardHandler)) }()
	return done
}
