// Package mesh serves Coinbase's Mesh API (formerly Rosetta), the standard
// through which exchanges and custodians read chains: JSON over POST, on
// its own listener (-mesh). It answers the Data API of Bitcoin-type coins
// from the index through api (Service, and LedgerQueries for blocks as
// balance changes and balances at past blocks), and that of Ethereum-type
// coins through EthLedgerQueries (eth_*.go); like the Esplora front it
// never reads db or the services. Every failure is a Mesh error object
// with HTTP 500, as the specification requires (errors.go).
package mesh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// Version is the version of the Mesh specification we answer (1.5.1,
// tools/meshcheck/testdata).
const Version = "1.5.1"

// maxBodySize bounds a request: the largest, /block requests, are a few
// hundred bytes.
const maxBodySize = 64 << 10

// Options configure the front.
type Options struct {
	// Blockchain and Network name the chain (Mesh's network identifier):
	// the coin's name and its network (mainnet, testnet, regtest...).
	Blockchain, Network string
	// Symbol and Decimals are the coin's currency.
	Symbol   string
	Decimals int
	// NodeVersion and MiddlewareVersion fill /network/options' version.
	NodeVersion, MiddlewareVersion string
	// RequestTimeout bounds one request (0: 60 s).
	RequestTimeout time.Duration
	Log            *slog.Logger
}

// Server is the Mesh front; it is an http.Handler.
type Server struct {
	svc    api.Service
	codec  Codec // the chain's addresses (svc online, the parser offline)
	ledger api.LedgerQueries
	esq    api.EsploraQueries
	// idx reads the index's chain for every chain type (its tip, blocks by
	// hash, the event stream); eth is set on Ethereum-type chains (eth_*.go).
	idx    chainIndex
	eth    api.EthLedgerQueries
	opts   Options
	cur    *Currency
	log    *slog.Logger
	routes map[string]func(context.Context, []byte) (any, error)
}

// New builds the front over a UTXO chain's service.
func New(svc api.Service, ledger api.LedgerQueries, esq api.EsploraQueries, opts Options) *Server {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 60 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	s := &Server{svc: svc, codec: svc, ledger: ledger, esq: esq, idx: utxoIndex{esq, ledger}, opts: opts, cur: &Currency{Symbol: opts.Symbol, Decimals: opts.Decimals},
		log: opts.Log.With("subsystem", "mesh")}
	s.routes = map[string]func(context.Context, []byte) (any, error){
		"/network/list":        s.networkList,
		"/network/options":     s.networkOptions,
		"/network/status":      s.networkStatus,
		"/block":               s.block,
		"/block/transaction":   s.blockTransaction,
		"/mempool":             s.mempool,
		"/mempool/transaction": s.mempoolTransaction,
		"/account/balance":     s.accountBalance,
		"/account/coins":       s.accountCoins,
		"/search/transactions": s.searchTransactions,
		"/events/blocks":       s.eventsBlocks,
		"/call":                s.call, // call.go
		// The Construction API (construction*.go).
		"/construction/derive":     s.constructionDerive,
		"/construction/preprocess": s.constructionPreprocess,
		"/construction/metadata":   s.constructionMetadata,
		"/construction/payloads":   s.constructionPayloads,
		"/construction/combine":    s.constructionCombine,
		"/construction/parse":      s.constructionParse,
		"/construction/hash":       s.constructionHash,
		"/construction/submit":     s.constructionSubmit,
	}
	for _, p := range unimplemented {
		s.routes[p] = func(context.Context, []byte) (any, error) {
			return nil, fail(errNotImplemented, "%s is not served yet", p)
		}
	}
	return s
}

// chainIndex is what the front reads of the index's chain.
type chainIndex interface {
	EsploraTip(ctx context.Context) (uint32, bchain.Hash, bool, error)
	EsploraBlockHeight(ctx context.Context, hash bchain.Hash) (uint32, bool, error)
	EsploraBlockRefs(ctx context.Context, heights []uint32) (map[uint32]api.EsploraBlockRef, error)
	LedgerEvents(ctx context.Context, offset int64, limit int) ([]api.LedgerEvent, int64, error)
}

type utxoIndex struct {
	api.EsploraQueries
	ledger api.LedgerQueries
}

func (u utxoIndex) LedgerEvents(ctx context.Context, offset int64, limit int) ([]api.LedgerEvent, int64, error) {
	return u.ledger.LedgerEvents(ctx, offset, limit)
}

// unimplemented are the specification's endpoints not served yet: they
// answer errNotImplemented (docs/api.md).
var unimplemented []string

// RequestCost weighs a request for the per-client budget in the public
// port's units: a block with all its operations, or a search (which may
// read an account's whole history) or a balance, 3; anything else 1.
func RequestCost(r *http.Request) int {
	switch r.URL.Path {
	case "/block", "/search/transactions", "/account/balance":
		// a past balance walks history; an Ethereum token balance reads
		// the blocks of the account's transfers from the node
		return 3
	}
	return 1
}

// ServeHTTP answers one POST.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in mesh handler", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			writeJSON(w, http.StatusInternalServerError, errInternal)
		}
	}()
	h, ok := s.routes[r.URL.Path]
	if !ok {
		writeJSON(w, http.StatusNotFound, &Error{Code: errNotImplemented.Code, Message: errNotImplemented.Message,
			Details: map[string]any{"reason": "no such endpoint"}})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, &Error{Code: errBadRequest.Code, Message: errBadRequest.Message,
			Details: map[string]any{"reason": "Mesh endpoints take POST"}})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodySize))
	if err != nil {
		s.writeError(w, r, failWith(errBadRequest, err, "body over %d bytes or unreadable", maxBodySize))
		return
	}
	out, err := h(ctx, body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// writeError answers err as a Mesh error (HTTP 500 for all, as the
// specification requires); errors from api are classified here, in one
// place.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	m, ok := asMeshError(err)
	switch {
	case ok:
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		m = &meshError{e: errUnavailable, details: "request timed out", cause: err}
	case errors.Is(err, api.ErrBlockChanged):
		m = &meshError{e: errBlockNotFound, details: err.Error(), cause: err}
	case errors.Is(err, api.ErrLedgerIncomplete):
		m = &meshError{e: errUnavailable, details: err.Error(), cause: err}
	case errors.Is(err, bchain.ErrNodeUnavailable):
		m = &meshError{e: errUnavailable, details: "the blockchain node is not responding", cause: err}
	default:
		if ue, isUser := api.AsUserError(err); isUser {
			m = &meshError{e: errRequestRejected, details: ue.Msg, cause: err}
		} else {
			s.log.Error("mesh request failed", "path", r.URL.Path, "err", err)
			m = &meshError{e: errInternal, cause: err}
		}
	}
	writeJSON(w, http.StatusInternalServerError, m.wire())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":11,"message":"Internal error","retriable":true}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// decode reads a request object strictly: one JSON object, no fields the
// specification does not define for it.
func decode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return failWith(errBadRequest, err, "%s", truncate(err.Error(), 200))
	}
	if dec.More() {
		return fail(errBadRequest, "trailing data after the request object")
	}
	return nil
}

// netRequest is the network identifier every request but /network/list
// carries (embedded, so its field reads as the request's own).
type netRequest struct {
	NetworkIdentifier *NetworkIdentifier `json:"network_identifier"`
}

func (r *netRequest) network() *NetworkIdentifier { return r.NetworkIdentifier }

// read decodes a request and accepts only the network served.
func (s *Server) read(body []byte, req interface{ network() *NetworkIdentifier }) error {
	if err := decode(body, req); err != nil {
		return err
	}
	return s.checkNetwork(req.network())
}

// checkNetwork accepts only the one network served.
func (s *Server) checkNetwork(n *NetworkIdentifier) error {
	if n == nil {
		return fail(errBadRequest, "network_identifier is required")
	}
	if n.Blockchain != s.opts.Blockchain || n.Network != s.opts.Network || n.SubNetworkIdentifier != nil {
		return fail(errUnknownNetwork, "%s/%s is not served here (this server: %s/%s)",
			truncate(n.Blockchain, 40), truncate(n.Network, 40), s.opts.Blockchain, s.opts.Network)
	}
	return nil
}

func (s *Server) network() NetworkIdentifier {
	return NetworkIdentifier{Blockchain: s.opts.Blockchain, Network: s.opts.Network}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
