package app

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// newTronStack builds the Tron parts: Tron's blocks go into the
// account-model index (as Blockbook keeps them in its Ethereum tables),
// its pending pool is followed by polling the node's pending list (Tron
// has no pending-tx subscription; Node.MempoolTxids), and the query
// service is the account-model one with Tron's names
// (api.NewTronService). The tip is polled (no block notifier), as
// Blockbook's Tron without ZeroMQ.
func newTronStack(ctx context.Context, e stackEnv) (*chainStack, error) {
	if e.backend.Eth == nil {
		return nil, fmt.Errorf("%w: the Tron backend has no account queries", bchain.ErrConfig)
	}
	return newAccountStack(ctx, e, api.NewTronService)
}
