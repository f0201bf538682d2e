package pkgtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/build/deb"
	"github.com/openexplorer/blockbook/internal/promreg"
	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// waitFor guards the event waits; it is not a speed assertion.
const waitFor = 90 * time.Second

// installed returns the package definition and unit of the installed
// package (BLOCKBOOK_PKG_ALIAS, default bitcoin_regtest). Without it the
// test skips, or fails under CI=true, where .ci/run installs it first.
func installed(t *testing.T) (deb.Coin, *Unit) {
	t.Helper()
	alias := os.Getenv("BLOCKBOOK_PKG_ALIAS")
	if alias == "" {
		alias = "bitcoin_regtest"
	}
	c, err := deb.Find(alias)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(deb.UnitDir, c.Unit())
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("package %s is not installed (%v): `make deb test-deb` as root builds, installs and runs it", c.Package(), err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	u, err := ParseUnit(path)
	if err != nil {
		t.Fatal(err)
	}
	return c, u
}

// The installed files are where the unit says, owned as postinst leaves
// them.
func TestInstalledLayout(t *testing.T) {
	c, u := installed(t)
	if u.ExecStart[0] != c.Dir()+"/bin/blockbook" {
		t.Errorf("ExecStart runs %s", u.ExecStart[0])
	}
	if st, err := os.Stat(u.ExecStart[0]); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("binary: %v %v", st, err)
	}
	if u.User != c.User {
		t.Errorf("User=%s, want %s", u.User, c.User)
	}
	if _, err := user.Lookup(c.User); err != nil {
		t.Errorf("postinst did not create the user: %v", err)
	}
	cert, _ := u.Flag("certfile")
	if _, err := tls.LoadX509KeyPair(cert+".crt", cert+".key"); err != nil {
		t.Errorf("-certfile=%s: %v", cert, err)
	}
	if st, err := os.Stat(cert + ".key"); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("key mode: %v %v", st, err)
	}
	// systemd's own check of the unit, where systemd is installed.
	if sa, err := exec.LookPath("systemd-analyze"); err == nil {
		if out, err := exec.Command(sa, "verify", filepath.Join(deb.UnitDir, c.Unit())).CombinedOutput(); err != nil {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	}
	for _, d := range []string{c.LogDir(), filepath.Dir(c.DataDir())} {
		st, err := os.Stat(d)
		if err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		if owner := ownerName(st); owner != c.User {
			t.Errorf("%s is owned by %s, want %s", d, owner, c.User)
		}
	}
}

func ownerName(st os.FileInfo) string {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	u, err := user.LookupId(strconv.Itoa(int(sys.Uid)))
	if err != nil {
		return strconv.Itoa(int(sys.Uid))
	}
	return u.Username
}

// Long: one scenario from the installed unit to in-sync HTTPS answers,
// kept in one place so that its steps read in order.
//
// The unit's command line, with only the node address (in a copy of the
// installed config), the datadir, the log dir and the ports changed, runs as
// the unit's user with its environment file, syncs a regtest chain and
// answers over HTTPS with the packaged certificate on both ports.
func TestInstalledUnitServesHTTPS(t *testing.T) {
	c, u := installed(t)
	node, err := regtest.Start(context.Background(), regtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop() })
	g := chaingen.New(&chaincfg.RegressionNetParams, "pkgtest")
	for i := 0; i < 12; i++ {
		if _, err := g.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Submit(context.Background(), node, 1); err != nil {
		t.Fatal(err)
	}
	height, hash := g.Tip()

	// The unit's user must reach the work dir: open it and its parent
	// (both private by default).
	work := t.TempDir()
	for _, d := range []string{filepath.Dir(work), work} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := nodeConfig(t, u, work, node)
	public, internal := freePort(t), freePort(t)
	args := u.WithFlags(map[string]string{
		"blockchaincfg": cfgPath, "datadir": filepath.Join(work, "db"), "log_dir": filepath.Join(work, "logs"),
		"public": public, "internal": internal,
	})
	if err := os.MkdirAll(filepath.Join(work, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	certPrefix, ok := u.Flag("certfile")
	if !ok || certPrefix != c.CertPrefix() {
		t.Fatalf("-certfile=%q, want the packaged %s", certPrefix, c.CertPrefix())
	}
	client := httpsClient(t, certPrefix+".crt")

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = u.WorkingDir
	cmd.Env = unitEnv(t, u)
	runAs(t, cmd, u.User, work)
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	t.Logf("running %s", strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			t.Logf("blockbook killed: %v", <-exited)
		}
	})

	waitInSync(t, client, "https://"+public, height, hash.String(), exited, logs)
	resp, err := client.Get("https://" + internal + "/metrics")
	if err != nil {
		t.Fatalf("internal port over HTTPS: %v\n%s", err, logs)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(promreg.WithoutCoin(string(body)), "blockbook_best_height "+strconv.Itoa(int(height))) {
		t.Errorf("internal /metrics: %d\n%.2000s", resp.StatusCode, body)
	}
	// systemd stops the unit with SIGTERM; the binary exits cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, logs)
		}
	case <-time.After(waitFor):
		t.Fatalf("no exit after SIGTERM\n%s", logs)
	}
}

// nodeConfig copies the installed runtime config with the node's RPC
// address and credentials put in.
func nodeConfig(t *testing.T, u *Unit, dir string, node *regtest.Node) string {
	t.Helper()
	src, ok := u.Flag("blockchaincfg")
	if !ok {
		t.Fatal("ExecStart has no -blockchaincfg")
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	cfg["rpc_url"], cfg["rpc_user"], cfg["rpc_pass"] = node.RPCURL, node.RPCUser, node.RPCPass
	// No ZMQ on btcd: the binary then uses btcd's websocket notifications.
	delete(cfg, "message_queue_binding")
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "blockchaincfg.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// unitEnv is the environment systemd would give: this one plus the
// unit's Environment= and its environment files (missing optional ones
// skipped).
func unitEnv(t *testing.T, u *Unit) []string {
	t.Helper()
	env := append(os.Environ(), u.Environment...)
	for _, f := range u.EnvFiles {
		optional := strings.HasPrefix(f, "-")
		f = strings.TrimPrefix(f, "-")
		vars, err := ReadEnvFile(f)
		if err != nil {
			if optional && errors.Is(err, os.ErrNotExist) {
				t.Logf("optional environment file %s is absent", f)
				continue
			}
			t.Fatal(err)
		}
		env = append(env, vars...)
	}
	return env
}

// runAs runs cmd as the unit's user when the test runs as root (CI), so the
// key's permissions and the user's rights are tested too.
func runAs(t *testing.T, cmd *exec.Cmd, name, work string) {
	t.Helper()
	if os.Geteuid() != 0 || name == "" {
		t.Logf("not root: running as the current user, not %s", name)
		return
	}
	usr, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(usr.Uid)
	gid, _ := strconv.Atoi(usr.Gid)
	err = filepath.Walk(work, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}

// httpsClient trusts only the packaged certificate.
func httpsClient(t *testing.T, certFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", certFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// waitInSync polls the status over HTTPS until the index holds the node's
// tip and the sync pass is done.
func waitInSync(t *testing.T, client *http.Client, base string, height int32, hash string, exited <-chan error, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("blockbook exited: %v\n%s", err, logs)
		default:
		}
		var st struct {
			Blockbook struct {
				BestHeight int32 `json:"bestHeight"`
				InSync     bool  `json:"inSync"`
			} `json:"blockbook"`
			Backend struct {
				BestBlockHash string `json:"bestBlockHash"`
			} `json:"backend"`
		}
		resp, err := client.Get(base + "/api/v2")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		switch {
		case err != nil && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
			t.Fatalf("the public port serves plain HTTP: the binary must serve TLS with -certfile (<prefix>.crt and .key)\n%s", logs)
		case err != nil:
			last = err.Error()
		case st.Blockbook.InSync && st.Blockbook.BestHeight == height && st.Backend.BestBlockHash == hash:
			return
		default:
			last = fmt.Sprintf("%+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("not in sync at %d %s over HTTPS; last: %s\n%s", height, hash, last, logs)
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
