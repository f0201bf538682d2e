package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/internal/selfsigned"
	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

const unitsDir = "testdata/units"

// execStartLines reads the rendered ExecStart lines of Blockbook's units,
// by coin alias.
func execStartLines(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(unitsDir, "execstart.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		out[fields[0]] = fields[1:] // the program, then its arguments
	}
	return out
}

// readEnvironmentFile parses a file as systemd's EnvironmentFile does for
// the simple cases: KEY=value lines, # and ; comments, blank lines, and
// values optionally in double or single quotes.
func readEnvironmentFile(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: not KEY=value: %q", path, line)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env = append(env, strings.TrimSpace(k)+"="+v)
	}
	return env
}

// writeSelfSignedCert writes <base>.crt and <base>.key for 127.0.0.1 and
// localhost, as the package's bundled pair is laid out, and returns a pool
// that trusts it.
func writeSelfSignedCert(t *testing.T, base string) *x509.CertPool {
	t.Helper()
	pool, err := selfsigned.WritePair(base)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// Every served coin's ExecStart line parses: all of Blockbook's flags,
// with each coin's additional parameters, are accepted.
func TestUnitsExecStartFlagsParse(t *testing.T) {
	lines := execStartLines(t)
	for _, alias := range []string{"bitcoin", "bitcoin_testnet", "bitcoin_testnet4", "bitcoin_signet", "bitcoin_regtest",
		"ethereum", "ethereum_archive", "ethereum_testnet_sepolia", "ethereum_testnet_sepolia_archive"} {
		args, ok := lines[alias]
		if !ok {
			t.Fatalf("no ExecStart line for %s", alias)
		}
		o, err := app.ParseFlags(args[1:], io.Discard)
		if err != nil {
			t.Errorf("%s: %v", alias, err)
			continue
		}
		if !o.Sync || o.CertFile == "" || o.LogDir == "" {
			t.Errorf("%s: parsed %+v", alias, o)
		}
	}
}

// localizeUnit changes only the paths and ports of an ExecStart line:
// /opt/coins/... moves under root, and each listening port is replaced.
func localizeUnit(args []string, root string, ports map[string]string) []string {
	portRe := regexp.MustCompile(`^(-(?:public|internal)=[^:]*:)(\d+)(.*)$`)
	out := make([]string, 0, len(args))
	for _, a := range args {
		a = strings.ReplaceAll(a, "/opt/coins", root)
		if m := portRe.FindStringSubmatch(a); m != nil {
			a = m[1] + ports[m[2]] + m[3]
		}
		out = append(out, a)
	}
	return out
}

// unitChild is the program started from a unit's command line.
type unitChild struct {
	cmd  *exec.Cmd
	logs *syncbuf.Buffer
	done chan struct{}
}

func startUnit(t *testing.T, args, env []string) *unitChild {
	t.Helper()
	c := &unitChild{logs: &syncbuf.Buffer{}, done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], args...)
	c.cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// unitRun is a program started from one coin's unit: its HTTPS client
// (trusting the generated certificate) and addresses.
type unitRun struct {
	child            *unitChild
	pool             *x509.CertPool
	client           *http.Client
	base             string // https://127.0.0.1:<public port>
	pubPort, intPort string
	install          string   // the coin's install directory (config, cert, logs)
	args             []string // the localized command line
	env              []string // the environment file's variables
}

// runUnit lays out a coin's installation under a temporary root as
// Blockbook's package does (config/blockchaincfg.json, cert/blockbook.crt
// and .key, logs/), and starts the program with the coin's ExecStart line,
// changed only in paths and ports, and the environment file.
func runUnit(t *testing.T, alias string, cfgJSON []byte, pubDefault, intDefault string) *unitRun {
	t.Helper()
	root := t.TempDir()
	u := &unitRun{install: filepath.Join(root, "blockbook", alias)}
	for _, d := range []string{"config", "logs", "bin"} {
		if err := os.MkdirAll(filepath.Join(u.install, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(u.install, "config", "blockchaincfg.json"), cfgJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	u.pool = writeSelfSignedCert(t, filepath.Join(u.install, "cert", "blockbook"))
	_, u.pubPort, _ = net.SplitHostPort(freePort(t))
	_, u.intPort, _ = net.SplitHostPort(freePort(t))
	line, ok := execStartLines(t)[alias]
	if !ok {
		t.Fatalf("no ExecStart line for %s", alias)
	}
	u.args = localizeUnit(line[1:], root, map[string]string{pubDefault: u.pubPort, intDefault: u.intPort})
	u.env = readEnvironmentFile(t, filepath.Join(unitsDir, "blockbook.env"))
	u.child = startUnit(t, u.args, u.env)
	u.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: u.pool}}}
	u.base = "https://127.0.0.1:" + u.pubPort
	return u
}

// wsDial opens the websocket over wss with an origin the environment
// file allows.
func (u *unitRun) wsDial(t *testing.T) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: u.pool}, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial("wss://127.0.0.1:"+u.pubPort+"/websocket", http.Header{"Origin": {trezorOrigin}})
	if err != nil {
		t.Fatalf("wss dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// wsCall sends one request and returns its answer's data.
func wsCall(t *testing.T, conn *websocket.Conn, id, method string, params any) json.RawMessage {
	t.Helper()
	if err := conn.WriteJSON(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		var msg struct {
			ID   string          `json:"id"`
			Data json.RawMessage `json:"data"`
		}
		if err := conn.ReadJSON(&msg); err != nil {
			t.Fatalf("%s over wss: %v", method, err)
		}
		if msg.ID == id {
			return msg.Data
		}
	}
}

// checkInternal: the internal server speaks TLS too, and plain HTTP is not
// served on the public TLS port.
func (u *unitRun) checkInternal(t *testing.T) {
	t.Helper()
	resp, err := u.client.Get("https://127.0.0.1:" + u.intPort + "/metrics")
	if err != nil {
		t.Fatalf("internal server over HTTPS: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "blockbook_db_size_bytes") {
		t.Fatalf("internal /metrics over HTTPS: %d %.200s", resp.StatusCode, body)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://127.0.0.1:" + u.pubPort + "/api/v2"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP answered on the TLS port")
		}
	}
}

// Blockbook's own unit for the Bitcoin regtest coin, with its environment
// file and HTTPS from a certificate at the unit's -certfile path, reaches
// in-sync answers over HTTPS: status, an address, the internal server and
// the websocket over wss. The environment file's settings act.
func TestUnitsBitcoinRegtest(t *testing.T) {
	node := startNode(t)
	g := demoChain(t)
	submit(t, g, node, 1)
	cfg, err := os.ReadFile(writeConfig(t, node, nil))
	if err != nil {
		t.Fatal(err)
	}
	u := runUnit(t, "bitcoin_regtest", cfg, "19121", "19021")
	h, hash := g.Tip()
	waitInSyncHTTPS(t, u.client, u.base, uint32(h), u.child)

	ledger := g.Ledger()
	addr := ""
	for a, l := range ledger.Addresses {
		if len(l.Txids) >= 2 && (addr == "" || a < addr) {
			addr = a
		}
	}
	var ai struct {
		Address string   `json:"address"`
		Balance string   `json:"balance"`
		Txids   []string `json:"txids"`
	}
	httpsJSON(t, u.client, u.base+"/api/v2/address/"+addr, 200, &ai)
	if want := ledger.Addresses[addr]; ai.Address != addr || ai.Balance != fmt.Sprint(want.Balance) || len(ai.Txids) != len(want.Txids) {
		t.Fatalf("address %s over HTTPS: %+v, want balance %d and %d txids", addr, ai, want.Balance, len(want.Txids))
	}
	var bi struct {
		BlockHash string `json:"blockHash"`
	}
	httpsJSON(t, u.client, fmt.Sprintf("%s/api/v2/block-index/%d", u.base, h), 200, &bi)
	if bi.BlockHash != hash.String() {
		t.Fatalf("block-index %d: %s, want %s", h, bi.BlockHash, hash)
	}
	// RBTC_REST_BALANCE_HISTORY_MAX_TXS=1 caps REST; the websocket cap
	// (the shared variable's 100000) lets the same history through.
	var apiErr struct {
		Error string `json:"error"`
	}
	httpsJSON(t, u.client, u.base+"/api/v2/balancehistory/"+addr, 400, &apiErr)
	if !strings.Contains(apiErr.Error, "More than 1 transactions") {
		t.Fatalf("REST balance history past the environment's cap: %+v", apiErr)
	}
	checkUnitWebsocket(t, u, addr)
	u.checkInternal(t)
	checkUnitLogs(t, filepath.Join(u.install, "logs"), u.child)
	u.checkMaintenance(t)
}

// checkMaintenance stops the service as systemd does (SIGTERM) and runs
// the same command line with -computedbstats and -repair on its index.
func (u *unitRun) checkMaintenance(t *testing.T) {
	t.Helper()
	if err := u.child.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-u.child.done:
	case <-time.After(waitFor):
		t.Fatal("blockbook did not stop on SIGTERM")
	}
	if !u.child.cmd.ProcessState.Success() {
		t.Fatalf("exit after SIGTERM: %v\n%s", u.child.cmd.ProcessState, tail(u.child.logs.String(), 20))
	}
	run := func(flag string) string {
		cmd := exec.Command(os.Args[0], append(append([]string{}, u.args...), flag, "-logtostderr")...)
		cmd.Env = append(append(os.Environ(), childEnv+"=1"), u.env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", flag, err, out)
		}
		return string(out)
	}
	if out := run("-computedbstats"); !regexp.MustCompile(`(?m)^\s*addressBalance\s+[1-9]`).MatchString(out) || !strings.Contains(out, "on_disk_bytes") {
		t.Errorf("-computedbstats:\n%s", out)
	}
	if out := run("-repair"); !strings.Contains(out, "nothing needs repair") {
		t.Errorf("-repair:\n%s", out)
	}
}

// Blockbook's unit for Ethereum, run against a geth dev node with the
// scenario's txs: in sync over HTTPS, an address's balance and nonce, and
// over wss the rpcCall allowlist of the environment file (an allowed
// selector runs, another answers "Not supported").
func TestUnitsEthereum(t *testing.T) {
	dev, ledger, cfg := startEthScenario(t, gethdev.Options{})
	u := runUnit(t, "ethereum", cfg, "9136", "9036")
	head, _ := dev.Head()
	waitInSyncHTTPS(t, u.client, u.base, uint32(head), u.child)

	var acct *ethgen.Address
	for _, a := range ledger.Addresses {
		if a.Name != "" && a.Nonce > 0 && (acct == nil || a.Addr.Hex() < acct.Addr.Hex()) {
			acct = a
		}
	}
	var ai struct {
		Balance string `json:"balance"`
		Nonce   string `json:"nonce"`
	}
	httpsJSON(t, u.client, u.base+"/api/v2/address/"+acct.Addr.Hex(), 200, &ai)
	if ai.Balance != acct.Balance.String() || ai.Nonce != fmt.Sprint(acct.Nonce) {
		t.Fatalf("address %s over HTTPS: %+v, want %s %d", acct.Addr.Hex(), ai, acct.Balance, acct.Nonce)
	}
	var token common.Address
	for a, c := range ledger.Contracts {
		if c.Standard == ethgen.ERC20 && (token == (common.Address{}) || a.Hex() < token.Hex()) {
			token = a
		}
	}
	conn := u.wsDial(t)
	arg := strings.Repeat("0", 24) + strings.ToLower(acct.Addr.Hex()[2:])
	// RETH_ALLOWED_EVM_CALL_METHODS allows balanceOf (0x70a08231) only.
	res := wsCall(t, conn, "1", "rpcCall", map[string]any{"to": token.Hex(), "data": "0x70a08231" + arg})
	var out struct {
		Data  string `json:"data"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(res, &out); err != nil || out.Error != nil || len(out.Data) != 66 {
		t.Fatalf("allowed rpcCall: %s %v", res, err)
	}
	res = wsCall(t, conn, "2", "rpcCall", map[string]any{"to": token.Hex(), "data": "0x18160ddd"})
	out.Error = nil
	if err := json.Unmarshal(res, &out); err != nil || out.Error == nil || out.Error.Message != "Not supported" {
		t.Fatalf("rpcCall outside the allowlist: %s %v", res, err)
	}
	u.checkInternal(t)
}

// checkUnitWebsocket talks to the websocket over wss: getInfo, a
// balance history under the websocket's cap, and an origin the
// environment does not allow is refused.
func checkUnitWebsocket(t *testing.T, u *unitRun, addr string) {
	t.Helper()
	d := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: u.pool}, HandshakeTimeout: 10 * time.Second}
	if _, resp, err := d.Dial("wss://127.0.0.1:"+u.pubPort+"/websocket", http.Header{"Origin": {"https://evil.example"}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("origin outside RBTC_WS_ALLOWED_ORIGINS: %v %v", resp, err)
	}
	conn := u.wsDial(t)
	var info struct {
		Shortcut   string `json:"shortcut"`
		BestHeight uint32 `json:"bestHeight"`
	}
	if err := json.Unmarshal(wsCall(t, conn, "1", "getInfo", map[string]any{}), &info); err != nil || info.Shortcut != "rBTC" || info.BestHeight == 0 {
		t.Fatalf("getInfo over wss: %+v %v", info, err)
	}
	hist := wsCall(t, conn, "2", "getBalanceHistory", map[string]any{"descriptor": addr})
	if strings.Contains(string(hist), "error") || !strings.HasPrefix(strings.TrimSpace(string(hist)), "[") {
		t.Fatalf("websocket balance history (under its cap): %.300s", hist)
	}
}

// checkUnitLogs: with -log_dir the log goes to a file there (linked as
// blockbook.INFO), and the variable for a missing feature was reported.
func checkUnitLogs(t *testing.T, dir string, child *unitChild) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "blockbook.INFO"))
	if err != nil {
		t.Fatalf("no log file in -log_dir: %v\nstderr:\n%s", err, tail(child.logs.String(), 20))
	}
	for _, want := range []string{"public server listening", "INFURA_API_KEY"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("log file lacks %q:\n%s", want, tail(string(data), 30))
		}
	}
}

// waitInSyncHTTPS waits until the status over HTTPS shows the tip and a
// finished sync pass.
func waitInSyncHTTPS(t *testing.T, client *http.Client, base string, height uint32, child *unitChild) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-child.done:
			t.Fatalf("blockbook exited: %v\n%s", child.cmd.ProcessState, tail(child.logs.String(), 30))
		default:
		}
		var st status
		resp, err := client.Get(base + "/api/v2")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		if err == nil && st.Blockbook.InSync && st.Blockbook.BestHeight == height {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("not in sync at %d over HTTPS (last error %v)\n%s", height, lastErr, tail(child.logs.String(), 30))
}

func httpsJSON(t *testing.T, client *http.Client, url string, want int, out any) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %.300s", url, resp.StatusCode, want, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v: %.300s", url, err, body)
	}
}

// bulkSyncStarted is the log line that opens a bulk session. Tests look
// for it, not for the session's closing line: the status reports in sync
// as soon as the last round commits, before the session has logged its end.
const bulkSyncStarted = `msg="bulk sync" `

// -workers=1 turns bulk import off, as Blockbook operators use it: with
// the same far-behind chain, two workers load it in bulk and one connects
// it block by block.
func TestUnitsWorkersOneNoBulk(t *testing.T) {
	for _, workers := range []int{2, 1} {
		st := startDemoStackWith(t, nil, func(o *app.Options) { o.Workers, o.BulkThreshold = workers, 1 })
		bulk := strings.Contains(st.inst.logs.String(), bulkSyncStarted)
		if bulk != (workers > 1) {
			t.Fatalf("-workers=%d: bulk load %v\n%s", workers, bulk, tail(st.inst.logs.String(), 20))
		}
		st.inst.stop(t)
	}
}
