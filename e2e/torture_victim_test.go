package e2e

// The abuse campaign's honest clients run in a process of their own: an
// honest wallet does not share a Go scheduler with 600 attackers, and in
// the test's own process their requests waited behind the attackers'
// goroutines as well as the server's, which the campaign does not mean
// to measure.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"
)

// victimEnv carries a victimPlan to a child run of the test binary.
const victimEnv = "E2E_ABUSE_VICTIM"

// victimPlan is what the victim child asks, and for how long.
type victimPlan struct {
	Health, Public, Esplora, Electrum string
	For                               time.Duration
}

// victimRecord is one timed request of the victim child.
type victimRecord struct {
	Name   string
	Took   time.Duration
	Failed bool
}

// runVictim is the child's main: every 250 ms it asks /health, the public
// status and Esplora's tip (a named client, X-Real-Ip) and pings Electrum
// on a new connection, until the plan's time is up, then writes its
// records to stdout as JSON.
func runVictim(planJSON string) int {
	var p victimPlan
	if err := json.Unmarshal([]byte(planJSON), &p); err != nil {
		fmt.Fprintln(os.Stderr, "victim plan:", err)
		return 2
	}
	client := &http.Client{Timeout: 10 * time.Second}
	var recs []victimRecord
	get := func(name, url string) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-Real-Ip", "198.51.100.99")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			recs = append(recs, victimRecord{Name: name, Failed: true})
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		recs = append(recs, victimRecord{Name: name, Took: time.Since(start), Failed: resp.StatusCode != 200})
	}
	for end := time.Now().Add(p.For); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		get("/health", p.Health)
		get("public", p.Public)
		get("esplora", p.Esplora)
		start := time.Now()
		err := electrumPing(p.Electrum)
		recs = append(recs, victimRecord{Name: "electrum", Took: time.Since(start), Failed: err != nil})
	}
	if err := json.NewEncoder(os.Stdout).Encode(recs); err != nil {
		return 1
	}
	return 0
}

// startVictim starts the victim child with plan.
func startVictim(plan victimPlan) (*exec.Cmd, *bytes.Buffer, error) {
	raw, err := json.Marshal(plan)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), victimEnv+"="+string(raw))
	out := new(bytes.Buffer)
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	return cmd, out, cmd.Start()
}

// victimRecords waits for the victim child and reads its records.
func victimRecords(cmd *exec.Cmd, out *bytes.Buffer) ([]victimRecord, error) {
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("victim child: %w", err)
	}
	var recs []victimRecord
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil {
		return nil, fmt.Errorf("victim child's records: %w", err)
	}
	return recs, nil
}
