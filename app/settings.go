package app

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/openexplorer/blockbook/server"
)

// runtimeKeys are the settings /admin/runtime-settings changes: the
// rpcCall allowlists, whose environment variables are the start values.
var runtimeKeys = []string{"ALLOWED_RPC_CALL_TO", "ALLOWED_EVM_CALL_METHODS"}

// runtimeSettings hold overrides of the rpcCall allowlists set through
// /admin. They live in memory only: a restart returns to the environment
// (Blockbook stores them in its database; see docs/operations.md).
type runtimeSettings struct {
	env envGetter
	log *slog.Logger

	mu        sync.RWMutex
	overrides map[string]string
	list      *rpcCallAllowlist // the effective allowlist (nil: all calls)
}

func newRuntimeSettings(env *envSettings, log *slog.Logger) *runtimeSettings {
	return &runtimeSettings{env: env.get, log: log, overrides: map[string]string{}, list: env.RPCCall}
}

// allowed decides an rpcCall against the effective allowlist.
func (s *runtimeSettings) allowed(to, data string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list.allowed(to, data)
}

func known(key string) bool {
	for _, k := range runtimeKeys {
		if k == key {
			return true
		}
	}
	return false
}

// effective reads a key from overrides, then the environment; an override
// of "" means explicitly unset.
func effective(overrides map[string]string, env envGetter, key string) (name, value string, set bool, source string) {
	if v, ok := overrides[key]; ok {
		return "runtime setting " + key, v, v != "", "override"
	}
	if env != nil {
		if name, v, ok := env(key); ok {
			return name, v, true, "env"
		}
	}
	return key, "", false, "unset"
}

func (s *runtimeSettings) setting(key string) server.RuntimeSetting {
	_, v, _, src := effective(s.overrides, s.env, key)
	return server.RuntimeSetting{Key: key, Value: v, Source: src}
}

// List returns every setting.
func (s *runtimeSettings) List() []server.RuntimeSetting {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]server.RuntimeSetting, 0, len(runtimeKeys))
	for _, k := range runtimeKeys {
		out = append(out, s.setting(k))
	}
	return out
}

// Get returns one setting.
func (s *runtimeSettings) Get(key string) (server.RuntimeSetting, error) {
	if !known(key) {
		return server.RuntimeSetting{}, fmt.Errorf("%w %q (known: ALLOWED_RPC_CALL_TO, ALLOWED_EVM_CALL_METHODS)", server.ErrUnknownSetting, key)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.setting(key), nil
}

// Set overrides a setting; an invalid value changes nothing.
func (s *runtimeSettings) Set(key, value string) (server.RuntimeSetting, error) {
	return s.change(key, func(o map[string]string) { o[key] = value })
}

// Reset removes an override, back to the environment's value.
func (s *runtimeSettings) Reset(key string) (server.RuntimeSetting, error) {
	return s.change(key, func(o map[string]string) { delete(o, key) })
}

// change applies edit to a copy of the overrides, validates the resulting
// allowlist and only then makes it live.
func (s *runtimeSettings) change(key string, edit func(map[string]string)) (server.RuntimeSetting, error) {
	if _, err := s.Get(key); err != nil {
		return server.RuntimeSetting{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]string, len(s.overrides)+1)
	for k, v := range s.overrides {
		next[k] = v
	}
	edit(next)
	list, err := readRPCCallAllowlist(func(suffix string) (string, string, bool) {
		name, v, set, _ := effective(next, s.env, suffix)
		return name, v, set
	})
	if err != nil {
		return server.RuntimeSetting{}, fmt.Errorf("invalid %s: %w", key, err)
	}
	s.overrides, s.list = next, list
	st := s.setting(key)
	s.log.Info("runtime setting changed", "key", key, "value", st.Value, "source", st.Source)
	return st, nil
}
