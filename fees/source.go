package fees

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/openexplorer/blockbook/mempool/projected"
)

// Projection is what LocalSource reads: the latest projected blocks, and
// whether they follow the node's mempool now (false before the mempool's
// first load, or while its resyncs fail).
type Projection interface {
	Snapshot() *projected.Snapshot
	Current() bool
}

// LocalSource computes the levels from our own projected blocks.
type LocalSource struct {
	Projection Projection
	// MinFee is the node's minimum fee in sat/vB (mempoolminfee), the
	// floor of the recommendation.
	MinFee func(ctx context.Context) (float64, error)
}

// errNotCurrent keeps old levels aging while the mempool is not followed.
var errNotCurrent = errors.New("the mempool is not in sync with the node")

func (s LocalSource) snapshot() (*projected.Snapshot, error) {
	if !s.Projection.Current() {
		return nil, errNotCurrent
	}
	return s.Projection.Snapshot(), nil
}

// MempoolBlocks are the projected blocks' summaries.
func (s LocalSource) MempoolBlocks(context.Context) ([]projected.MempoolBlock, error) {
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	return snap.MempoolBlocks(), nil
}

// Recommended is the recommendation over the node's minimum fee.
func (s LocalSource) Recommended(ctx context.Context) (projected.RecommendedFees, error) {
	snap, err := s.snapshot()
	if err != nil {
		return projected.RecommendedFees{}, err
	}
	minFee, err := s.MinFee(ctx)
	if err != nil {
		return projected.RecommendedFees{}, fmt.Errorf("minimum fee: %w", err)
	}
	return snap.RecommendedFees(minFee), nil
}

// RemoteSource downloads the levels from a mempool.space-compatible URL
// (its /api/v1/fees/mempool-blocks or /api/v1/fees/recommended), as
// Blockbook does.
type RemoteSource struct {
	URL    string
	Client *http.Client // nil: a client with a 30 s timeout
}

// maxRemoteBody bounds an answer: mempool-blocks is about 2 KB.
const maxRemoteBody = 1 << 20

var defaultClient = &http.Client{Timeout: 30 * time.Second}

func (s RemoteSource) get(ctx context.Context, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return err
	}
	c := s.Client
	if c == nil {
		c = defaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s returned status %d", s.URL, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRemoteBody+1))
	if err != nil {
		return err
	}
	if len(body) > maxRemoteBody {
		return fmt.Errorf("%s: answer larger than %d bytes", s.URL, maxRemoteBody)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s: %w", s.URL, err)
	}
	return nil
}

// MempoolBlocks downloads the projected blocks.
func (s RemoteSource) MempoolBlocks(ctx context.Context) ([]projected.MempoolBlock, error) {
	var out []projected.MempoolBlock
	return out, s.get(ctx, &out)
}

// Recommended downloads the recommendation.
func (s RemoteSource) Recommended(ctx context.Context) (projected.RecommendedFees, error) {
	var out projected.RecommendedFees
	return out, s.get(ctx, &out)
}
