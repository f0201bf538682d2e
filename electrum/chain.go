package electrum

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// readTip reads the index's tip header.
func (s *Server) readTip(ctx context.Context) (*headerNote, error) {
	for range 3 { // the tip may move between the two reads
		info, err := s.svc.Info(ctx)
		if err != nil {
			return nil, err
		}
		hs, err := s.scripts.BlockHeaders(ctx, info.BestHeight, 1)
		if err != nil {
			return nil, err
		}
		if len(hs) == 1 && info.BestHeight > 0 || len(hs) == 1 && info.BestHash != "" {
			return &headerNote{Height: info.BestHeight, Hex: hex.EncodeToString(hs[0])}, nil
		}
	}
	return nil, newErr(codeBusy, "the index has no blocks yet (initial sync); retry later")
}

func (s *Server) tipHeight(ctx context.Context) (uint32, error) {
	info, err := s.svc.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.BestHeight, nil
}

func headersSubscribe(ctx context.Context, ss *session, _ params) (any, error) {
	note, err := ss.s.hub.tipHeader(ctx)
	if err != nil {
		return nil, err
	}
	if !ss.headers {
		ss.headers = true
		ss.s.hub.subscribeHeaders(ss)
	}
	ss.lastHeader = note
	return note, nil
}

// headerProof is a header's (or the last header's) merkle proof to the
// root of the headers up to a checkpoint.
type headerProof struct {
	Branch []string `json:"branch"`
	Header string   `json:"header,omitempty"`
	Root   string   `json:"root"`
}

func blockHeader(ctx context.Context, ss *session, p params) (any, error) {
	height, err := p.nonNegInt(0, "height", 0, true)
	if err != nil {
		return nil, err
	}
	cp, err := p.nonNegInt(1, "cp_height", 0, false)
	if err != nil {
		return nil, err
	}
	if cp != 0 && height > cp {
		return nil, badRequest("header height %d must be <= cp_height %d", height, cp)
	}
	hs, err := ss.s.scripts.BlockHeaders(ctx, uint32(height), 1)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, badRequest("height %d out of range", height)
	}
	h := hex.EncodeToString(hs[0])
	if cp == 0 {
		return h, nil
	}
	branch, root, err := ss.s.headerProof(ctx, height, cp)
	if err != nil {
		return nil, err
	}
	return headerProof{Branch: branch, Header: h, Root: root}, nil
}

// headersAnswer is block.headers' answer: 1.4 concatenates the headers in
// hex, 1.6 lists them.
type headersAnswer struct {
	Count   int      `json:"count"`
	Hex     *string  `json:"hex,omitempty"`
	Headers []string `json:"headers,omitempty"`
	Max     int      `json:"max"`
	Root    string   `json:"root,omitempty"`
	Branch  []string `json:"branch,omitempty"`
}

func blockHeaders(ctx context.Context, ss *session, p params) (any, error) {
	start, err := p.nonNegInt(0, "start_height", 0, true)
	if err != nil {
		return nil, err
	}
	count, err := p.nonNegInt(1, "count", 0, true)
	if err != nil {
		return nil, err
	}
	cp, err := p.nonNegInt(2, "cp_height", 0, false)
	if err != nil {
		return nil, err
	}
	count = min(count, maxHeaders)
	if cp != 0 && count > 0 && start+count-1 > cp {
		return nil, badRequest("header height %d must be <= cp_height %d", start+count-1, cp)
	}
	var hs [][]byte
	if count > 0 {
		if hs, err = ss.s.scripts.BlockHeaders(ctx, uint32(start), count); err != nil {
			return nil, err
		}
	}
	out := headersAnswer{Count: len(hs), Max: maxHeaders}
	if ss.v16() {
		out.Headers = make([]string, len(hs))
		for i, h := range hs {
			out.Headers[i] = hex.EncodeToString(h)
		}
		if len(out.Headers) == 0 {
			out.Headers = []string{}
		}
	} else {
		var sb strings.Builder
		for _, h := range hs {
			sb.WriteString(hex.EncodeToString(h))
		}
		s := sb.String()
		out.Hex = &s
	}
	if cp != 0 && len(hs) > 0 {
		if out.Branch, out.Root, err = ss.s.headerProof(ctx, start+len(hs)-1, cp); err != nil {
			return nil, err
		}
	}
	if ss.v16() {
		return headers16(out), nil
	}
	return out, nil
}

// headers16 writes an empty header list as [] (omitempty would drop it).
type headers16 headersAnswer

func (h headers16) MarshalJSON() ([]byte, error) {
	type plain struct {
		Count   int      `json:"count"`
		Headers []string `json:"headers"`
		Max     int      `json:"max"`
		Root    string   `json:"root,omitempty"`
		Branch  []string `json:"branch,omitempty"`
	}
	return json.Marshal(plain{Count: h.Count, Headers: h.Headers, Max: h.Max, Root: h.Root, Branch: h.Branch})
}

// headerProof proves the header at height to the merkle root of the
// headers 0..cp; cp must be at or below the tip.
func (s *Server) headerProof(ctx context.Context, height, cp int) ([]string, string, error) {
	tip, err := s.tipHeight(ctx)
	if err != nil {
		return nil, "", err
	}
	if cp > int(tip) {
		return nil, "", badRequest("cp_height %d is above the tip %d", cp, tip)
	}
	branch, root, err := s.headerHashes.proof(ctx, s.scripts, height, cp)
	if err != nil {
		return nil, "", err
	}
	return shownAll(branch), shown(root), nil
}

// headerHashCache keeps the hashes of the headers from 0 so that proofs
// need not hash every header again. The cache is valid while its last
// hash is still the hash of the header at its height: a header commits
// to all before it.
type headerHashCache struct {
	mu     sync.Mutex
	hashes [][32]byte
	// trees are the chunk roots per checkpoint (header_tree.go); each
	// checks its own last header, so a reorg above it keeps it.
	trees map[int]*headerTree
}

const headerChunk = 2016

func (c *headerHashCache) upTo(ctx context.Context, sq api.ScriptQueries, cp int) ([][32]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.hashes); n > 0 {
		check := min(n-1, cp)
		hs, err := sq.BlockHeaders(ctx, uint32(check), 1)
		if err != nil {
			return nil, err
		}
		if len(hs) != 1 || hash256(hs[0]) != c.hashes[check] {
			c.hashes = nil // a reorg below the cached part
		} else if cp < n {
			return c.hashes[:cp+1], nil
		}
	}
	for len(c.hashes) <= cp {
		hs, err := sq.BlockHeaders(ctx, uint32(len(c.hashes)), min(headerChunk, cp+1-len(c.hashes)))
		if err != nil {
			return nil, err
		}
		if len(hs) == 0 {
			return nil, badRequest("cp_height %d is above the tip", cp)
		}
		for _, h := range hs {
			c.hashes = append(c.hashes, hash256(h))
		}
	}
	return c.hashes[:cp+1], nil
}

// estimateFee answers in coins per 1000 vbytes, -1 when the node has no
// estimate. From 1.6, mode picks the node's estimate mode.
func estimateFee(ctx context.Context, ss *session, p params) (any, error) {
	blocks, err := p.nonNegInt(0, "number", 0, true)
	if err != nil {
		return nil, err
	}
	conservative := true
	if p.has(1) {
		if !ss.v16() {
			return nil, invalidParams("mode needs protocol 1.6")
		}
		mode, err := p.str(1, "mode")
		if err != nil {
			return nil, err
		}
		switch strings.ToUpper(mode) {
		case "CONSERVATIVE":
		case "ECONOMICAL", "UNSET":
			conservative = false
		default:
			return nil, badRequest("unknown estimate mode %q (CONSERVATIVE, ECONOMICAL or UNSET)", truncate(mode, 20))
		}
	}
	fees := ss.s.svc.Capabilities().FeeEstimates
	if fees == nil || blocks < 1 {
		return -1, nil
	}
	if _, err := api.ParseFeeBlocks(strconv.Itoa(blocks)); err != nil {
		return nil, badRequest("number must be 1 to 1008")
	}
	res, err := fees.EstimateFee(ctx, blocks, conservative)
	if errors.Is(err, bchain.ErrUnsupported) {
		return -1, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := strconv.ParseFloat(res.Result, 64)
	if err != nil || v <= 0 {
		return -1, nil
	}
	return json.Number(res.Result), nil
}

// relayFees are the node's relay fees, or the configured ones.
func (s *Server) relayFees(ctx context.Context) (minRelay, mempoolMin, incremental int64, err error) {
	if rf, ok := s.svc.(RelayFeeQueries); ok {
		return rf.RelayFees(ctx)
	}
	return s.cfg.RelayFee, s.cfg.RelayFee, s.cfg.IncrementalRelayFee, nil
}

// coins renders satoshis per 1000 vbytes as coins, as JSON number.
func coins(sat int64) json.Number {
	return json.Number(strconv.FormatFloat(float64(sat)/1e8, 'f', 8, 64))
}

func relayFee(ctx context.Context, ss *session, _ params) (any, error) {
	minRelay, _, _, err := ss.s.relayFees(ctx)
	if err != nil {
		return nil, err
	}
	return coins(minRelay), nil
}

func mempoolInfo(ctx context.Context, ss *session, _ params) (any, error) {
	minRelay, mempoolMin, incr, err := ss.s.relayFees(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]json.Number{"mempoolminfee": coins(max(minRelay, mempoolMin)), "minrelaytxfee": coins(minRelay),
		"incrementalrelayfee": coins(incr)}, nil
}
