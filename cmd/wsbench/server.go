package main

import (
	"context"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// startBlockbook runs the binary against node until its index and mempool
// are in sync with g's tip.
func startBlockbook(ctx context.Context, bin, work string, node *regtest.Node, g *chaingen.Generator) (*benchproc.Process, error) {
	h, _ := g.Tip()
	return benchproc.Start(ctx, benchproc.Options{Bin: bin, Work: work, Node: node, Height: uint32(h),
		Mempool: true, Timeout: 5 * time.Minute})
}

func wsURL(p *benchproc.Process) string { return "ws://" + p.Public + "/websocket" }

// connections is the server's open websocket connection gauge (-1 when
// unknown).
func connections(p *benchproc.Process) int {
	v, ok := p.Metrics("blockbook_websocket_")["blockbook_websocket_connections"]
	if !ok {
		return -1
	}
	return int(v)
}
