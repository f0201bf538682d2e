package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/tools/benchproc"
)

// crashRun syncs the chain again into a new datadir, kills the process with
// SIGKILL in the middle of the bulk load (a random moment after the first
// round is committed), restarts it to the end, and compares the result with
// the uninterrupted run's index.
func crashRun(cfg, work, refDir string, height int32, args []string) (string, error) {
	dir := filepath.Join(work, "crash-index")
	start := func() (*exec.Cmd, string, error) {
		addr, err := benchproc.FreeAddr()
		if err != nil {
			return nil, "", err
		}
		cmd := exec.Command(binPath, append([]string{"-blockchaincfg=" + cfg, "-datadir=" + dir, "-public=" + addr}, args...)...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		return cmd, "http://" + addr, cmd.Start()
	}
	cmd, base, err := start()
	if err != nil {
		return "", err
	}
	for bestHeight(base) <= 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Duration(rand.Int63n(int64(time.Second))))
	killedAt := bestHeight(base)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if killedAt >= height {
		return "", fmt.Errorf("the kill came after the sync finished")
	}
	cmd, base, err = start()
	if err != nil {
		return "", err
	}
	if err := waitInSync(context.Background(), base, height, cmd); err != nil {
		return "", err
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	identical, err := sameIndex(refDir, dir)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("kill -9 mid bulk load (committed tip %d of %d), restarted to the tip: index byte-identical to the uninterrupted run: %v",
		killedAt, height, identical), nil
}

// bestHeight returns the index tip height the status reports, -1 if none yet.
func bestHeight(base string) int32 {
	resp, err := http.Get(base + "/api/v2")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var st struct {
		Blockbook struct {
			BestHeight int32 `json:"bestHeight"`
		} `json:"blockbook"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return -1
	}
	return st.Blockbook.BestHeight
}

// benchCoin and benchNetwork are the coin_name and network of the index.
var benchCoin, benchNetwork = "Regtest", "regtest"

func openRO(dir string) (*db.DB, error) {
	return rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: benchCoin, Network: benchNetwork,
		ReadOnly: true, Log: slog.New(slog.DiscardHandler)})
}

// sameIndex compares two closed indexes row by row.
func sameIndex(a, b string) (bool, error) {
	da, err := openRO(a)
	if err != nil {
		return false, err
	}
	defer da.Close()
	dbb, err := openRO(b)
	if err != nil {
		return false, err
	}
	defer dbb.Close()
	diffs, err := db.Diff(da, dbb, db.ColumnFamilies(bchain.ChainBitcoinType), 5)
	for _, d := range diffs {
		fmt.Fprintln(os.Stderr, "  differs:", d)
	}
	return len(diffs) == 0, err
}

// level0Files reports the LSM's level-0 file counts of a closed index.
func level0Files(dir string) (map[string]int, error) {
	d, err := openRO(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.FilesAtLevel0(), nil
}
