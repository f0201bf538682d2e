package main

import (
	"context"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// startBlockbook runs the binary against node until its index is in sync
// with g's tip; prof, when set, is its -prof address.
func startBlockbook(ctx context.Context, bin, work string, node *regtest.Node, g *chaingen.Generator, prof string) (*benchproc.Process, error) {
	h, _ := g.Tip()
	var args []string
	if prof != "" {
		args = append(args, "-prof="+prof)
	}
	return benchproc.Start(ctx, benchproc.Options{Bin: bin, Work: work, Node: node, Height: uint32(h), Args: args})
}
