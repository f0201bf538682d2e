package app

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/electrum"
	"github.com/openexplorer/blockbook/internal/listen"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/syncer"
)

// electrumOptions are the Electrum server's flags (not Blockbook's: it has
// no Electrum server).
type electrumOptions struct {
	TCP, TLS, WS                     string // listen addresses; "" off
	MaxConns, MaxConnsPerIP, MaxSubs int
	MaxHistory, MaxRequestBytes      int
	MaxBatch, MaxAnswerBytes         int
	MaxSubsPerIP, MaxSubsTotal       int
	MaxSubsBytesPerIP, MaxSubsBytes  int
	MaxCallsPerIP                    int
	// The Silent Payments scans (electrum/spscan.go).
	SPMaxSubs, SPMaxSubsTotal, SPMaxLabels, SPWorkers int
	SPMaxSubsPerIP                                    int
	CallsPerMinute, CallBurst                         int
	MaxQueueBytes, MaxQueuedBytes                     int
	Banner, DonationAddress                           string
	RelayFeeSat                                       int64
	IdleTimeout                                       time.Duration
}

func (e *electrumOptions) on() bool { return e.TCP != "" || e.TLS != "" || e.WS != "" }

// declareElectrumFlags declares the Electrum server's flags.
func declareElectrumFlags(fs *flag.FlagSet, e *electrumOptions) {
	fs.StringVar(&e.TCP, "electrum", "", "serve the Electrum protocol (newline-delimited JSON-RPC over TCP) on this [address]:port (Bitcoin-type coins)")
	fs.StringVar(&e.TLS, "electrumtls", "", "serve the Electrum protocol over TLS on this [address]:port, with -certfile's certificate")
	fs.StringVar(&e.WS, "electrumws", "", "serve the Electrum protocol over websocket on this [address]:port (any path)")
	fs.IntVar(&e.MaxConns, "electrummaxconns", electrum.DefaultMaxConns, "most open Electrum connections")
	fs.IntVar(&e.MaxConnsPerIP, "electrummaxconnsperip", electrum.DefaultMaxConnsPerIP, "most open Electrum connections from one client address")
	fs.IntVar(&e.MaxSubs, "electrummaxsubs", electrum.DefaultMaxSubs, "most script hashes and outpoints one Electrum connection may subscribe to")
	fs.IntVar(&e.MaxHistory, "electrummaxhistory", electrum.DefaultMaxHistory, "most txs of a script hash an Electrum history, status or subscription reads (more: \"history too large\")")
	fs.IntVar(&e.MaxRequestBytes, "electrummaxrequest", electrum.DefaultMaxRequestBytes, "largest Electrum message in bytes (a line, or a websocket message)")
	fs.IntVar(&e.MaxSubsPerIP, "electrummaxsubsperip", electrum.DefaultMaxSubsPerIP, "most script hashes and outpoints the Electrum connections of one client address may subscribe to")
	fs.IntVar(&e.MaxSubsTotal, "electrummaxsubstotal", electrum.DefaultMaxSubsTotal, "most script hash and outpoint subscriptions of all Electrum connections")
	fs.IntVar(&e.MaxSubsBytesPerIP, "electrummaxsubsbytesperip", electrum.DefaultMaxSubsBytesPerIP, "most bytes the Electrum subscriptions of one client address may hold (each counts 512 plus its script)")
	fs.IntVar(&e.MaxSubsBytes, "electrummaxsubsbytes", electrum.DefaultMaxSubsBytes, "most bytes all Electrum subscriptions may hold (each counts 512 plus its script)")
	fs.IntVar(&e.MaxCallsPerIP, "electrummaxcallsperip", electrum.DefaultMaxCallsPerIP, "most Electrum calls of one client address in progress over all its connections; more wait for a place")
	fs.IntVar(&e.CallsPerMinute, "electrumcallsperminute", electrum.DefaultCallsPerMinute, "Electrum cost units one client may spend per minute: a call costs 1, more by the rows and bytes it reads (each call of a batch counts; loopback and private peers are exempt); -1 turns the rate limit off")
	fs.IntVar(&e.CallBurst, "electrumcallburst", electrum.DefaultCallBurst, "Electrum cost units one client may spend at once before -electrumcallsperminute applies")
	fs.IntVar(&e.MaxBatch, "electrummaxbatch", electrum.DefaultMaxBatch, "most calls in one Electrum batch")
	fs.IntVar(&e.MaxAnswerBytes, "electrummaxanswer", electrum.DefaultMaxAnswerBytes, "most bytes one Electrum call or batch may produce; calls past it answer \"response too large\"")
	fs.IntVar(&e.MaxQueueBytes, "electrummaxqueue", electrum.DefaultMaxQueueBytes, "most bytes of answers and notifications queued to one Electrum connection")
	fs.IntVar(&e.MaxQueuedBytes, "electrummaxqueued", electrum.DefaultMaxQueuedBytes, "most bytes of answers and notifications queued to all Electrum connections")
	fs.DurationVar(&e.IdleTimeout, "electrumidletimeout", electrum.DefaultIdleTimeout, "close Electrum connections that send nothing for this long")
	fs.IntVar(&e.SPMaxSubs, "electrumspmaxsubs", electrum.DefaultSPMaxSubs, "most Silent Payments addresses one Electrum connection may have the server scan for")
	fs.IntVar(&e.SPMaxSubsPerIP, "electrumspmaxsubsperip", electrum.DefaultSPMaxSubsPerIP, "most Silent Payments addresses the server scans for one client address, over its Electrum connections (local peers exempt)")
	fs.IntVar(&e.SPMaxSubsTotal, "electrumspmaxsubstotal", electrum.DefaultSPMaxSubsTotal, "most Silent Payments addresses the server scans for, over all Electrum connections")
	fs.IntVar(&e.SPMaxLabels, "electrumspmaxlabels", electrum.DefaultSPMaxLabels, "most labels one Silent Payments subscription may scan for")
	fs.IntVar(&e.SPWorkers, "electrumspworkers", 0, "blocks scanned at once for Silent Payments subscriptions, over all connections (0: half the cores)")
	fs.StringVar(&e.Banner, "electrumbanner", "", "server.banner's text (default: names the server and the coin)")
	fs.StringVar(&e.DonationAddress, "electrumdonationaddress", "", "server.donation_address's answer")
	fs.Int64Var(&e.RelayFeeSat, "electrumrelayfee", electrum.DefaultRelayFee, "the node's minimum relay fee in satoshis per 1000 vbytes, for blockchain.relayfee and mempool.get_info")
}

// startElectrum starts the Electrum listeners the flags ask for (nil when
// none), over the query service; block and mempool events reach its
// subscribers from the sync worker (or a replica's catch-up) and the
// mempool.
func startElectrum(e stackEnv, stack *chainStack, svc api.Service, worker tipSource, srvs *servers) (*electrum.Server, error) {
	o := &e.o.Electrum
	if !o.on() {
		return nil, nil
	}
	if e.backend.Type != bchain.ChainBitcoinType {
		return nil, fmt.Errorf("%w: -electrum, -electrumtls and -electrumws serve Bitcoin-type coins only", bchain.ErrConfig)
	}
	if o.TLS != "" && e.tls == nil {
		return nil, fmt.Errorf("%w: -electrumtls needs -certfile", bchain.ErrConfig)
	}
	scripts := svc.Capabilities().Scripts
	if scripts == nil {
		return nil, fmt.Errorf("%w: the query service does not answer by script hash; the Electrum server cannot run", bchain.ErrConfig)
	}
	srv, err := newElectrumServer(e, svc, scripts)
	if err != nil {
		return nil, err
	}
	el := &electrumServers{srv: srv}
	srvs.started = append(srvs.started, el)
	serveOn := func(name, addr string, tlsCfg *tls.Config, capped bool, serve func(net.Listener) error) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%w: %s server: %v", bchain.ErrConfig, name, err)
		}
		if capped { // TCP and TLS: the websocket's HTTP server has the kit's caps
			ln = electrumCapped(ln, o, e.o.Listen.LimitLocal, tlsCfg == nil, srv)
		}
		if tlsCfg != nil {
			ln = tls.NewListener(ln, tlsCfg)
		}
		if e.o.OnListen != nil {
			e.o.OnListen(name, ln.Addr().String())
		}
		e.log.Info("Electrum server listening", "transport", name, "addr", ln.Addr().String())
		srvs.wg.Add(1)
		go func() {
			defer srvs.wg.Done()
			if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				e.log.Error("server failed", "server", name, "err", err)
			}
		}()
		return nil
	}
	if o.TCP != "" {
		if err := serveOn("electrum", o.TCP, nil, true, srv.Serve); err != nil {
			return nil, err
		}
	}
	if o.TLS != "" {
		raw := e.tls.Clone()
		raw.NextProtos = nil // a raw TLS stream, not HTTP
		if err := serveOn("electrumtls", o.TLS, raw, true, srv.Serve); err != nil {
			return nil, err
		}
	}
	if o.WS != "" {
		var serveWS func(net.Listener) error
		el.ws, serveWS = electrumWSServer(e, srv)
		if err := serveOn("electrumws", o.WS, nil, false, serveWS); err != nil {
			return nil, err
		}
	}
	worker.onBlock(func(ev syncer.BlockEvent) {
		if ev.Connected != nil && !ev.Disconnected {
			srv.OnBlockConnected(ev.Connected)
			return
		}
		srv.OnBlock()
	})
	if stack.mempool != nil {
		stack.mempool.OnTx(func(tx *mempool.Tx) {
			srv.OnMempoolTx(tx.Descs())
			srv.OnMempoolSpends(tx.Txid, spentTxids(tx))
		})
		stack.mempool.OnResolved(func(_ *mempool.Tx, descs []bchain.AddrDesc) { srv.OnMempoolTx(descs) })
	}
	return srv, nil
}

// spentTxids are the txids of the outputs a pending tx spends.
func spentTxids(tx *mempool.Tx) []bchain.Hash {
	out := make([]bchain.Hash, 0, len(tx.Vin))
	for i := range tx.Vin {
		if !tx.Vin[i].Coinbase {
			out = append(out, tx.Vin[i].PrevTxid)
		}
	}
	return out
}

// newElectrumServer builds the server from the flags.
func newElectrumServer(e stackEnv, svc api.Service, scripts api.ScriptQueries) (*electrum.Server, error) {
	o := &e.o.Electrum
	proxies, err := server.ParseTrustedProxies(e.o.WsTrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("%w: -wstrustedproxies: %v", bchain.ErrConfig, err)
	}
	// The websocket's clients are named by the kit's one rule, as on the
	// public port; TCP and TLS clients are their peers.
	wsClient := func(r *http.Request) (string, bool) { return listen.Attribute(r, proxies, e.env.ClientIP) }
	return electrum.New(svc, scripts, electrum.Config{
		MaxConns: o.MaxConns, MaxConnsPerIP: o.MaxConnsPerIP, MaxSubs: o.MaxSubs, MaxHistory: o.MaxHistory,
		MaxRequestBytes: o.MaxRequestBytes, IdleTimeout: o.IdleTimeout, RelayFee: o.RelayFeeSat,
		MaxSubsPerIP: o.MaxSubsPerIP, MaxSubsTotal: o.MaxSubsTotal, MaxSubsBytesPerIP: o.MaxSubsBytesPerIP, MaxSubsBytes: o.MaxSubsBytes, MaxCallsPerIP: o.MaxCallsPerIP, CallsPerMinute: o.CallsPerMinute, CallBurst: o.CallBurst, MaxBatch: o.MaxBatch, MaxAnswerBytes: o.MaxAnswerBytes,
		MaxQueueBytes: o.MaxQueueBytes, MaxQueuedBytes: o.MaxQueuedBytes,
		SPMaxSubs: o.SPMaxSubs, SPMaxSubsTotal: o.SPMaxSubsTotal, SPMaxSubsPerIP: o.SPMaxSubsPerIP, SPMaxLabels: o.SPMaxLabels, SPWorkers: o.SPWorkers,
		ServerVersion: "blockbook-go " + build.Version, Banner: o.Banner, DonationAddress: o.DonationAddress,
		Hosts: electrumHosts(o), Log: e.log.With("server", "electrum"), WSClient: wsClient,
		LimitLocal: e.o.Listen.LimitLocal, Gate: e.gate, Late: e.o.Listen.late(), Metrics: e.reg,
	})
}

// electrumWSServer is the websocket listener's HTTP server, from the
// listener kit like every HTTP listener, and how it serves a listener.
func electrumWSServer(e stackEnv, srv *electrum.Server) (*http.Server, func(net.Listener) error) {
	kit := e.o.Listen.kit(false)
	kit.MaxHeaderBytes = listen.FrontMaxHeaderBytes
	kit.Log = e.log.With("server", "electrumws")
	ws := kit.Server(srv.WebsocketHandler())
	return ws, func(ln net.Listener) error { return ws.Serve(kit.Listener(ln)) }
}

// electrumHosts are server.features' hosts: the ports of the listeners
// that have a host name (an address without one serves every host, and
// the client knows where it connected).
func electrumHosts(o *electrumOptions) map[string]electrum.HostPorts {
	hosts := map[string]electrum.HostPorts{}
	add := func(addr string, tlsPort bool) {
		host, port, err := net.SplitHostPort(addr)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || host == "" {
			return
		}
		hp := hosts[host]
		if tlsPort {
			hp.SSLPort = &n
		} else {
			hp.TCPPort = &n
		}
		hosts[host] = hp
	}
	add(o.TCP, false)
	add(o.TLS, true)
	return hosts
}

// electrumServers stops the Electrum server and its websocket listener
// with the other servers.
type electrumServers struct {
	srv *electrum.Server
	ws  *http.Server
}

func (s *electrumServers) Serve(net.Listener) error {
	return errors.New("electrum: served by startElectrum")
}

func (s *electrumServers) Shutdown(ctx context.Context) error {
	var errWS error
	if s.ws != nil {
		errWS = s.ws.Shutdown(ctx)
	}
	return errors.Join(errWS, s.srv.Close(ctx))
}
