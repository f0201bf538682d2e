// Command blockserver serves a chain written by cmd/scalegen to blockbook
// as a Bitcoin Core node would: JSON-RPC on -rpc and blocks over the P2P
// port on -p2p (blockbook's p2p_address). Any rpc_user/rpc_pass is
// accepted.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/openexplorer/blockbook/tools/scalegen"
)

func main() {
	dir := flag.String("dir", "", "directory written by scalegen (required)")
	rpcAddr := flag.String("rpc", "127.0.0.1:18443", "JSON-RPC listen address")
	p2pAddr := flag.String("p2p", "127.0.0.1:18444", "P2P listen address")
	flag.Parse()
	if err := run(*dir, *rpcAddr, *p2pAddr); err != nil {
		fmt.Fprintln(os.Stderr, "blockserver:", err)
		os.Exit(1)
	}
}

func run(dir, rpcAddr, p2pAddr string) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	s, err := scalegen.Open(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	rl, err := net.Listen("tcp", rpcAddr)
	if err != nil {
		return err
	}
	pl, err := net.Listen("tcp", p2pAddr)
	if err != nil {
		return err
	}
	fmt.Printf("serving %d blocks (tip %s): rpc %s, p2p %s\n", s.Tip()+1, s.Hash(s.Tip()), rl.Addr(), pl.Addr())
	errc := make(chan error, 2)
	go func() { errc <- s.ServeRPC(rl) }()
	go func() { errc <- s.ServeP2P(pl) }()
	return <-errc
}
