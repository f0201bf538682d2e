package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// ErrChainID is the refusal of a node that runs another network than the
// configured coin's (its message says so in words).
var ErrChainID = errors.New("chain id mismatch")

// traceConfig is debug_traceBlockByHash's tracer configuration: the call
// tracer, with trace_timeout as the node's own time limit when set.
func (n *Node) traceConfig() map[string]any {
	c := map[string]any{"tracer": "callTracer"}
	if n.traceTimeout != "" {
		c["timeout"] = n.traceTimeout
	}
	return c
}

// missingBlockRetrier retries a block the node does not have yet (a load
// balancer's node behind the one that announced the tip), per Blockbook's
// missingBlockRetry key, before the syncer sees ErrBlockNotFound and
// rechecks the chain.
type missingBlockRetrier struct {
	*Node
	delay    time.Duration
	attempts int
	maxStall time.Duration
}

// withMissingBlockRetry wraps node when the key is set (the node as is
// otherwise: a missing block goes straight to the syncer's recheck).
func withMissingBlockRetry(node *Node, r *bchain.MissingBlockRetry) bchain.BlockChain {
	if r == nil {
		return node
	}
	m := &missingBlockRetrier{Node: node, delay: time.Second, attempts: 10, maxStall: time.Minute}
	if r.RetryDelayMs > 0 {
		m.delay = time.Duration(r.RetryDelayMs) * time.Millisecond
	}
	if r.RecheckThreshold > 0 {
		m.attempts = r.RecheckThreshold
	}
	if r.MaxStallMs > 0 {
		m.maxStall = time.Duration(r.MaxStallMs) * time.Millisecond
	}
	return m
}

// Block fetches a block, asking again while the node answers that it has
// not got it, up to the configured attempts and stall time.
func (m *missingBlockRetrier) Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	deadline := time.Now().Add(m.maxStall)
	for attempt := 1; ; attempt++ {
		b, err := m.Node.Block(ctx, hash, height)
		if !errors.Is(err, bchain.ErrBlockNotFound) || attempt >= m.attempts || time.Now().Add(m.delay).After(deadline) {
			return b, err
		}
		m.log.Debug("block not on the node yet, asking again", "height", height, "hash", hash.String(), "attempt", attempt)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(m.delay):
		}
	}
}

// consensusVersion is the consensus client's version (consensusNodeVersion:
// its beacon API /eth/v1/node/version URL), asked at most once a minute,
// shown in the status' backend consensus_version as Blockbook does.
type consensusVersion struct {
	url    string
	client *http.Client
	log    *slog.Logger

	mu      sync.Mutex
	version string
	asked   time.Time
	warned  bool
}

// consensusPoll is how long an answer is kept (Blockbook asks each minute).
const consensusPoll = time.Minute

// consensusUnreachable is what Blockbook shows when the client does not answer.
const consensusUnreachable = "unreachable-locally"

func newConsensusVersion(url string, log *slog.Logger) *consensusVersion {
	if url == "" {
		return nil
	}
	return &consensusVersion{url: url, client: &http.Client{Timeout: 2 * time.Second}, log: log}
}

// get returns the cached version, asking the client again when stale.
func (c *consensusVersion) get(ctx context.Context) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.asked.IsZero() && time.Since(c.asked) < consensusPoll {
		return c.version
	}
	v, err := c.fetch(ctx)
	c.asked = time.Now()
	if err != nil {
		if !c.warned {
			c.log.Warn("consensus node version not available", "url", c.url, "err", err)
			c.warned = true
		}
		v = consensusUnreachable
	}
	c.version = v
	return v
}

func (c *consensusVersion) fetch(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("consensus node version: HTTP %d", resp.StatusCode)
	}
	var body struct {
		Data struct {
			Version string `json:"version"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body); err != nil {
		return "", fmt.Errorf("consensus node version: %w", err)
	}
	return body.Data.Version, nil
}
