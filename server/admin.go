package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// RuntimeSetting is one setting changeable at run time, with where its
// value comes from: "override" (set through /admin), "env" or "unset".
type RuntimeSetting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// ErrUnknownSetting is returned for a key that is no runtime setting.
var ErrUnknownSetting = errors.New("unknown runtime setting")

// RuntimeSettings are the settings /admin/runtime-settings manages. Set and
// Reset return an error for an invalid value (answered with 400) and change
// nothing then.
type RuntimeSettings interface {
	List() []RuntimeSetting
	Get(key string) (RuntimeSetting, error)
	Set(key, value string) (RuntimeSetting, error)
	Reset(key string) (RuntimeSetting, error)
}

// AdminConfig configures /admin on the internal server.
type AdminConfig struct {
	// User and Password (BB_ADMIN_USER, BB_ADMIN_PASSWORD) guard every
	// route; unless both are set, /admin answers 503 (fail closed).
	User, Password string
	Settings       RuntimeSettings
	Over           *OverLimits
	Websocket      *Websocket // its address blocklist, when served
	// Checkpoint, when set, serves POST /admin/checkpoint
	// (admin_checkpoint.go).
	Checkpoint Checkpointer
	// Contracts, when set (Ethereum-type chains), serves the token
	// metadata routes, and Traces their trace retries (admin_contracts.go).
	Contracts ContractAdmin
	Traces    TraceRetrier
	Log       *slog.Logger
}

// Admin registers /admin on the internal server.
func (i *Internal) Admin(cfg AdminConfig) {
	cfg.User, cfg.Password = strings.TrimSpace(cfg.User), strings.TrimSpace(cfg.Password)
	a := &admin{cfg: cfg, sleep: time.Sleep}
	a.pages = append([]string{"/admin/runtime-settings/", "/admin/ws-limit-exceeding-ips", "/admin/checkpoint"}, a.registerContracts(i.mux)...)
	i.mux.Handle("/admin", a.guard(http.HandlerFunc(a.index)))
	i.mux.Handle("/admin/{$}", a.guard(http.HandlerFunc(a.index)))
	i.mux.Handle("/admin/runtime-settings/", a.guard(http.HandlerFunc(a.settings)))
	i.mux.Handle("/admin/ws-limit-exceeding-ips", a.guard(http.HandlerFunc(a.overLimits)))
	i.mux.Handle("/admin/checkpoint", a.guard(http.HandlerFunc(a.checkpoint)))
	i.mux.Handle("/admin/", a.guard(http.NotFoundHandler()))
}

type admin struct {
	cfg   AdminConfig
	sleep func(time.Duration)
	pages []string // the index's list

	// failMu serializes the answers to wrong credentials, each after a
	// delay that grows with the failures in a row: guesses in parallel
	// gain nothing, and the operator's right password is never delayed.
	failMu   sync.Mutex
	fails    int
	lastFail time.Time
}

// Wrong-credential delays: failDelay per failure in a row, at most
// maxFailDelay; the count is forgotten after failMemory without one.
const (
	failDelay    = 100 * time.Millisecond
	maxFailDelay = 2 * time.Second
	failMemory   = 10 * time.Minute
)

// failed waits out a wrong guess.
func (a *admin) failed() {
	a.failMu.Lock()
	defer a.failMu.Unlock()
	if time.Since(a.lastFail) > failMemory {
		a.fails = 0
	}
	a.fails++
	a.lastFail = time.Now()
	a.sleep(min(time.Duration(a.fails)*failDelay, maxFailDelay))
}

// guard answers 503 unless credentials are configured and 401 unless the
// request carries them. Hashing both sides makes the comparison take the
// same time whatever the lengths.
func (a *admin) guard(h http.Handler) http.Handler {
	want := sha256.Sum256([]byte(a.cfg.User + "\x00" + a.cfg.Password))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.User == "" || a.cfg.Password == "" {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{"Admin interface disabled: set BB_ADMIN_USER and BB_ADMIN_PASSWORD"})
			return
		}
		u, p, ok := r.BasicAuth()
		got := sha256.Sum256([]byte(u + "\x00" + p))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			if ok { // a guess, not a browser's first unauthenticated try
				a.failed()
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="blockbook admin", charset="UTF-8"`)
			writeJSON(w, http.StatusUnauthorized, errorBody{"Unauthorized"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (a *admin) index(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Method not allowed"})
		return
	}
	writeJSON(w, http.StatusOK, map[string][]string{"pages": a.pages})
}

// settings serves GET (one, or all on the bare path), POST/PUT
// {"value":...} and DELETE of /admin/runtime-settings/<KEY>.
func (a *admin) settings(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Settings == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"No runtime settings on this server"})
		return
	}
	key := strings.Trim(strings.TrimPrefix(r.URL.Path, "/admin/runtime-settings/"), "/")
	var (
		s   RuntimeSetting
		err error
	)
	switch r.Method {
	case http.MethodGet:
		if key == "" {
			writeJSON(w, http.StatusOK, a.cfg.Settings.List())
			return
		}
		s, err = a.cfg.Settings.Get(key)
	case http.MethodPost, http.MethodPut:
		var body struct {
			Value *string `json:"value"`
		}
		data, rerr := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if rerr != nil || json.Unmarshal(data, &body) != nil || body.Value == nil {
			writeJSON(w, http.StatusBadRequest, errorBody{`Body must be a JSON object {"value":"..."}`})
			return
		}
		s, err = a.cfg.Settings.Set(key, *body.Value)
	case http.MethodDelete:
		s, err = a.cfg.Settings.Reset(key)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Method not allowed"})
		return
	}
	switch {
	case errors.Is(err, ErrUnknownSetting):
		writeJSON(w, http.StatusNotFound, errorBody{err.Error()})
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
	default:
		writeJSON(w, http.StatusOK, s)
	}
}

// overLimits lists the clients over the REST and websocket limits and the
// addresses blocked from new websocket connections.
func (a *admin) overLimits(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{"Method not allowed"})
		return
	}
	out := struct {
		REST      []OverLimit          `json:"rest"`
		Websocket []OverLimit          `json:"websocket"`
		Blocked   map[string]time.Time `json:"blocked"`
	}{REST: []OverLimit{}, Websocket: []OverLimit{}, Blocked: map[string]time.Time{}}
	if a.cfg.Over != nil {
		out.REST, out.Websocket = a.cfg.Over.List()
	}
	if a.cfg.Websocket != nil {
		out.Blocked = a.cfg.Websocket.Blocked()
	}
	writeJSON(w, http.StatusOK, out)
}
