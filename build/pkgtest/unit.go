// Package pkgtest runs an installed blockbook Debian package the way
// systemd would: its unit's ExecStart, User and EnvironmentFile, against a
// btcd regtest node, and checks that it answers in sync over HTTPS with the
// packaged certificate.
package pkgtest

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Unit is what the test reads from a systemd unit file.
type Unit struct {
	ExecStart   []string
	User        string
	EnvFiles    []string // "-" prefix kept: the file is optional
	WorkingDir  string
	Environment []string
}

// ParseUnit reads the [Service] keys the test needs, joining continued
// lines. Quoting is not interpreted: the package's units use none.
func ParseUnit(path string) (*Unit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("unit: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only
	u := &Unit{}
	var cont strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasSuffix(line, "\\") {
			cont.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		line = cont.String() + line
		cont.Reset()
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch key {
		case "ExecStart":
			u.ExecStart = strings.Fields(strings.TrimLeft(val, "@-:+!"))
		case "User":
			u.User = val
		case "EnvironmentFile":
			u.EnvFiles = append(u.EnvFiles, val)
		case "WorkingDirectory":
			u.WorkingDir = val
		case "Environment":
			u.Environment = append(u.Environment, strings.Fields(val)...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("unit %s: %w", path, err)
	}
	if len(u.ExecStart) == 0 {
		return nil, fmt.Errorf("unit %s: no ExecStart", path)
	}
	return u, nil
}

// Flag returns the value of -name=value on the command line.
func (u *Unit) Flag(name string) (string, bool) {
	for _, a := range u.ExecStart[1:] {
		if v, ok := strings.CutPrefix(a, "-"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// WithFlags is the command line with some flags' values replaced (flags not
// on it are appended).
func (u *Unit) WithFlags(set map[string]string) []string {
	out := []string{u.ExecStart[0]}
	done := map[string]bool{}
	for _, a := range u.ExecStart[1:] {
		name, _, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if v, ok := set[name]; ok && hasVal {
			a = "-" + name + "=" + v
			done[name] = true
		}
		out = append(out, a)
	}
	for name, v := range set {
		if !done[name] {
			out = append(out, "-"+name+"="+v)
		}
	}
	return out
}

// ReadEnvFile reads NAME=value lines as systemd's EnvironmentFile does
// (comments and blank lines skipped, one level of quotes removed).
func ReadEnvFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("environment file: %w", err)
	}
	var env []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env = append(env, strings.TrimSpace(k)+"="+v)
	}
	return env, nil
}
