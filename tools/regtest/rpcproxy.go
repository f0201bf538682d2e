package regtest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
)

// startRPCProxy forwards connections on listen to btcd's RPC server at
// target. btcd serves RPC without TLS only on 127.0.0.1 and ::1, so a node
// whose Options.Host is another loopback IP is reached through it. It runs
// until the listener is closed (Node.Stop; a restart opens it again).
func startRPCProxy(listen, target string) (net.Listener, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go forward(c, target)
		}
	}()
	return ln, nil
}

func forward(c net.Conn, target string) {
	defer c.Close()
	t, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer t.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(t, c)
		if tc, ok := t.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, t)
	_ = c.Close() // unblocks the other copy
	<-done
}

// RandomLoopback is a loopback IP (127.x.y.z) for Options.Host, unlikely
// to be another test's.
func RandomLoopback() string {
	return fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(250), rand.IntN(250), 1+rand.IntN(250))
}
