package api

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

type countedAccounts struct{ calls int }

func (c *countedAccounts) AccountChainExtra(context.Context, string) (any, error) {
	c.calls++
	return map[string]int{"frozenBalanceV2": 1}, nil
}

type switchProbe struct{ down bool }

func (p *switchProbe) Check() error {
	if p.down {
		return fmt.Errorf("frozen: %w", bchain.ErrNodeUnavailable)
	}
	return nil
}
func (p *switchProbe) State() bchain.NodeLiveness { return bchain.NodeLiveness{Responding: !p.down} }
func (*switchProbe) WaitInfo(context.Context)     {}

// A Tron address's account data is a node call like any other: refused
// at once, without reaching the node, while the probe says it is down.
func TestTronAccountsGated(t *testing.T) {
	a, p := &countedAccounts{}, &switchProbe{down: true}
	g := gatedTronAccounts{a, p}
	if _, err := g.AccountChainExtra(context.Background(), "TXYZ"); !errors.Is(err, bchain.ErrNodeUnavailable) || a.calls != 0 {
		t.Fatalf("node down: %v after %d calls, want ErrNodeUnavailable and none", err, a.calls)
	}
	p.down = false
	if v, err := g.AccountChainExtra(context.Background(), "TXYZ"); err != nil || v == nil || a.calls != 1 {
		t.Fatalf("node up: %v %v after %d calls", v, err, a.calls)
	}
}
