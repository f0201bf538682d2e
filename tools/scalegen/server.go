package scalegen

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/btcsuite/btcd/chainhash/v2"
)

// Server serves a generated chain as a Bitcoin Core node would, for the
// calls blockbook's Bitcoin backend makes: JSON-RPC (chain info, hashes,
// headers, raw blocks, fees, an empty mempool) and the P2P port (version
// handshake, getdata for blocks, ping).
type Server struct {
	dir    string
	recs   []record
	byHash map[[32]byte]int32
	files  map[uint32]*os.File
	mu     sync.Mutex
	size   int64
}

// Open loads the index of the chain in dir.
func Open(dir string) (*Server, error) {
	data, err := os.ReadFile(filepath.Join(dir, indexFile))
	if err != nil {
		return nil, fmt.Errorf("open generated chain: %w", err)
	}
	if len(data) == 0 || len(data)%recordSize != 0 {
		return nil, fmt.Errorf("open generated chain: %s has %d bytes, not whole records", indexFile, len(data))
	}
	s := &Server{dir: dir, byHash: make(map[[32]byte]int32, len(data)/recordSize), files: map[uint32]*os.File{}}
	for i := 0; i < len(data); i += recordSize {
		r := unmarshalRecord(data[i : i+recordSize])
		s.byHash[r.hash] = int32(len(s.recs))
		s.recs = append(s.recs, r)
		s.size += int64(r.size)
	}
	return s, nil
}

// Close releases the open blk files.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		_ = f.Close() // read-only: nothing to lose
	}
	s.files = map[uint32]*os.File{}
}

// Tip is the height of the last block.
func (s *Server) Tip() int32 { return int32(len(s.recs) - 1) }

// Hash returns the hash of the block at height (display order).
func (s *Server) Hash(height int32) string { return chainhash.Hash(s.recs[height].hash).String() }

// Height returns the height of the block with hash (internal byte order).
func (s *Server) Height(hash [32]byte) (int32, bool) {
	h, ok := s.byHash[hash]
	return h, ok
}

// Block reads the serialized block at height, for tools that play the
// node's part in other ways (e.g. serving confirmed txs to the API).
func (s *Server) Block(height int32) ([]byte, error) { return s.block(height) }

// block reads the serialized block at height.
func (s *Server) block(height int32) ([]byte, error) {
	r := s.recs[height]
	s.mu.Lock()
	f, ok := s.files[r.file]
	if !ok {
		var err error
		if f, err = os.Open(blkName(s.dir, r.file)); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.files[r.file] = f
	}
	s.mu.Unlock()
	b := make([]byte, r.size)
	if _, err := f.ReadAt(b, int64(r.offset)); err != nil {
		return nil, fmt.Errorf("block %d: %w", height, err)
	}
	return b, nil
}

// rpcError is a JSON-RPC error as Bitcoin Core reports it.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

var (
	errNotFound  = &rpcError{Code: -5, Message: "Block not found"}
	errBadParams = &rpcError{Code: -8, Message: "Invalid parameter"}
)

// ServeHTTP answers one JSON-RPC 1.0 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var result any
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		err = &rpcError{Code: -32700, Message: "Parse error"}
	} else {
		result, err = s.call(req.Method, req.Params)
	}
	resp := map[string]any{"id": req.ID, "result": result, "error": nil}
	status := http.StatusOK
	var re *rpcError
	if errors.As(err, &re) {
		resp["result"], resp["error"] = nil, re
		status = http.StatusInternalServerError // as Core does for errors
		if re.Code == -32601 {
			status = http.StatusNotFound
		}
	} else if err != nil {
		resp["result"], resp["error"] = nil, &rpcError{Code: -1, Message: err.Error()}
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// call dispatches one method.
func (s *Server) call(method string, params []json.RawMessage) (any, error) {
	tip := s.Tip()
	switch method {
	case "getblockchaininfo":
		return map[string]any{"chain": "regtest", "blocks": tip, "headers": tip, "bestblockhash": s.Hash(tip),
			"difficulty": 4.656542373906925e-10, "size_on_disk": s.size, "warnings": ""}, nil
	case "getnetworkinfo":
		return map[string]any{"version": 270000, "subversion": "/scalegen-blockserver:1.0/", "protocolversion": 70016,
			"timeoffset": 0, "relayfee": 0.00001, "warnings": ""}, nil
	case "getbestblockhash":
		return s.Hash(tip), nil
	case "getblockhash":
		var h int32
		if len(params) < 1 || json.Unmarshal(params[0], &h) != nil {
			return nil, errBadParams
		}
		if h < 0 || h > tip {
			return nil, &rpcError{Code: -8, Message: "Block height out of range"}
		}
		return s.Hash(h), nil
	case "getblockheader", "getblock":
		return s.blockCall(method, params)
	case "estimatesmartfee":
		return map[string]any{"feerate": 0.0001, "blocks": 2}, nil
	case "getrawmempool":
		return []string{}, nil
	case "getmempoolinfo":
		return map[string]any{"loaded": true, "size": 0, "bytes": 0, "mempoolminfee": 0.00001}, nil
	case "getrawtransaction":
		return nil, &rpcError{Code: -5, Message: "No such mempool or blockchain transaction"}
	}
	return nil, &rpcError{Code: -32601, Message: "Method not found"}
}

// blockCall answers getblockheader (verbose) and getblock (raw hex only).
func (s *Server) blockCall(method string, params []json.RawMessage) (any, error) {
	var hs string
	if len(params) < 1 || json.Unmarshal(params[0], &hs) != nil {
		return nil, errBadParams
	}
	hash, err := chainhash.NewHashFromStr(hs)
	if err != nil {
		return nil, errBadParams
	}
	h, ok := s.byHash[*hash]
	if !ok {
		return nil, errNotFound
	}
	if method == "getblock" {
		var verbosity int
		if len(params) > 1 {
			_ = json.Unmarshal(params[1], &verbosity)
		}
		if verbosity != 0 {
			return nil, &rpcError{Code: -8, Message: "this server serves raw blocks only (verbosity 0)"}
		}
		b, err := s.block(h)
		if err != nil {
			return nil, err
		}
		return hex.EncodeToString(b), nil
	}
	hdr := map[string]any{"hash": hs, "height": h, "confirmations": s.Tip() - h + 1}
	if h > 0 {
		hdr["previousblockhash"] = s.Hash(h - 1)
	}
	if h < s.Tip() {
		hdr["nextblockhash"] = s.Hash(h + 1)
	}
	return hdr, nil
}

// ServeRPC serves JSON-RPC on ln until it is closed.
func (s *Server) ServeRPC(ln net.Listener) error {
	return (&http.Server{Handler: s}).Serve(ln) //nolint:gosec // a local benchmark tool
}
