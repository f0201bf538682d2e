package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// server is the blockbook child process.
type server struct {
	cmd     *exec.Cmd
	public  string // host:port
	logPath string
	done    chan struct{}
}

func startBlockbook(ctx context.Context, bin, work string, node *regtest.Node, g *chaingen.Generator) (*server, error) {
	cfg := filepath.Join(work, "blockchaincfg.json")
	data, _ := json.Marshal(map[string]any{"coin_name": "Regtest", "coin_shortcut": "rBTC", "rpc_url": node.RPCURL,
		"rpc_user": node.RPCUser, "rpc_pass": node.RPCPass, "parse": true, "block_addresses_to_keep": 300})
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		return nil, err
	}
	public, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &server{public: public, logPath: filepath.Join(work, "blockbook.log"), done: make(chan struct{})}
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "-blockchaincfg="+cfg, "-datadir="+filepath.Join(work, "index"), "-sync",
		"-public="+public, "-internal=none", "-workers=2")
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w (build it with `go build -o bin/blockbook .`)", bin, err)
	}
	go func() { _ = s.cmd.Wait(); logFile.Close(); close(s.done) }()
	h, _ := g.Tip()
	if err := s.waitInSync(ctx, uint32(h)); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w (log: %s)", err, s.logPath)
	}
	return s, nil
}

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *server) stop() {
	if s.exited() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// waitInSync polls the status until the index is in sync at height.
func (s *server) waitInSync(ctx context.Context, height uint32) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if s.exited() {
			return errors.New("blockbook exited")
		}
		var st struct {
			Blockbook struct {
				InSync     bool   `json:"inSync"`
				BestHeight uint32 `json:"bestHeight"`
			} `json:"blockbook"`
		}
		if resp, err := http.Get("http://" + s.public + "/api/v2"); err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err == nil && st.Blockbook.InSync && st.Blockbook.BestHeight == height {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("blockbook not in sync at %d within 10 minutes", height)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
