package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the kernel's USER_HZ (100 on Linux), the unit of the CPU
// times in /proc/<pid>/stat.
const clockTick = 100

// cpuTime returns a process's user and system CPU time from /proc (zeros
// where there is none or the process is gone).
func cpuTime(pid int) (user, sys time.Duration) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	return time.Duration(ut) * time.Second / clockTick, time.Duration(st) * time.Second / clockTick
}

// selfCPU is this process's (the load generator's) user and system time.
func selfCPU() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// proc is a process whose CPU time a run accounts.
type proc struct {
	name string
	pid  int // 0: this process
}

type cpuSample struct{ user, sys time.Duration }

func sampleAll(ps []proc) []cpuSample {
	out := make([]cpuSample, len(ps))
	for i, p := range ps {
		if p.pid == 0 {
			out[i].user, out[i].sys = selfCPU()
		} else {
			out[i].user, out[i].sys = cpuTime(p.pid)
		}
	}
	return out
}

func numCPU() int { return runtime.NumCPU() }

// height reads the status's best height.
func height(client *http.Client, u string, out *uint32) error {
	resp, err := client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st struct {
		Blockbook struct {
			BestHeight uint32 `json:"bestHeight"`
		} `json:"blockbook"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return err
	}
	*out = st.Blockbook.BestHeight
	return nil
}
