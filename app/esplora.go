package app

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/esplora"
	"github.com/openexplorer/blockbook/internal/listen"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/syncer"
)

// esploraOptions are the flags of the Esplora REST listener.
type esploraOptions struct {
	// Addr is -esplora=<host:port>: where Esplora's API is served under
	// /api ("" disables it).
	Addr string
	// AddressPrefix is -esploraaddressprefix: keep the address-prefix
	// index that /api/address-prefix searches.
	AddressPrefix bool
	// StatsInterval is a test hook: live-2h-chart's period on the
	// mempool.space websocket (0: a minute, as mempool.space).
	StatsInterval time.Duration
}

func (e *esploraOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&e.Addr, "esplora", "", "serve Blockstream's Esplora REST API under /api on this binding [address]:port (Bitcoin-type coins; default: off)")
	fs.BoolVar(&e.AddressPrefix, "esploraaddressprefix", false, "keep the address-prefix index that Esplora's /api/address-prefix/:prefix searches (default: off; the endpoint then answers \"address search disabled\")")
}

// startEsplora starts the Esplora listener when -esplora is given (nil
// front otherwise); a chain type without Esplora's queries is a
// configuration error.
func startEsplora(srvs *servers, o *Options, e stackEnv, stack *chainStack, worker tipSource, svc api.Service, over *server.OverLimits) (*esplora.Server, error) {
	if o.Esplora.Addr == "" {
		return nil, nil
	}
	if e.backend.Type != bchain.ChainBitcoinType {
		return nil, fmt.Errorf("%w: -esplora serves Bitcoin-type coins only, not %s", bchain.ErrConfig, e.backend.Type)
	}
	scripts := svc.Capabilities().Scripts
	if scripts == nil {
		return nil, fmt.Errorf("%w: -esplora: the %s service has no script queries", bchain.ErrConfig, e.backend.Type)
	}
	eq, ok := svc.(api.EsploraQueries)
	if !ok {
		return nil, fmt.Errorf("%w: -esplora: the %s service has no Esplora queries", bchain.ErrConfig, e.backend.Type)
	}
	opts := esplora.Options{Log: e.log, Registerer: e.reg, WS: esplora.WSConfig{StatsInterval: o.Esplora.StatsInterval}}
	if s, ok := svc.(esplora.AddressSearcher); ok && o.Esplora.AddressPrefix {
		opts.AddressSearch = s
	}
	front := esplora.New(svc, scripts, eq, opts)
	wsCtx, stopWS := context.WithCancel(context.Background())
	// The websocket's connections are hijacked: Shutdown does not close them.
	closeWS := func() { stopWS(); front.CloseWS() }
	if err := startFront(srvs, o, e, over, "esplora", o.Esplora.Addr, front, esplora.RequestCost, closeWS); err != nil {
		stopWS()
		return nil, err
	}
	feedEsploraWS(wsCtx, srvs, stack, worker, front)
	return front, nil
}

// startFront serves a protocol front on its own listener from the kit,
// behind the public port's per-client budget (its own buckets, the front's
// costs, the same client identity rule and defaults); onShutdown (if any)
// runs before the listener's Shutdown.
func startFront(srvs *servers, o *Options, e stackEnv, over *server.OverLimits, name, addr string, h http.Handler, cost func(*http.Request) int, onShutdown func()) error {
	lim, err := restLimiter(o, e.env, over, e.reg, name, cost)
	if err != nil {
		return err
	}
	// The per-client budget before the gate: a client over its own is
	// refused without taking a place of the process's.
	h = e.gate.Wrap(name, h, func(r *http.Request) bool { return cost(r) > 1 })
	if lim != nil {
		h = lim.Wrap(h)
	}
	kit := o.Listen.kit(e.tls != nil)
	kit.MaxHeaderBytes = listen.FrontMaxHeaderBytes
	kit.Log = e.log.With("subsystem", name)
	return srvs.start(name, addr, &frontServer{name: name, srv: kit.Server(h), onShutdown: onShutdown})
}

// feedEsploraWS runs mempool.space's websocket on the Esplora listener:
// the sync worker's blocks, the mempool's txs and the projection's
// rebuilds reach its clients, as they reach the Blockbook websocket's.
func feedEsploraWS(ctx context.Context, srvs *servers, stack *chainStack, worker tipSource, front *esplora.Server) {
	srvs.wg.Add(1)
	go func() {
		defer srvs.wg.Done()
		front.RunWS(ctx)
	}()
	worker.onBlock(func(ev syncer.BlockEvent) {
		if ev.HasTip && !ev.Disconnected {
			front.OnBlock(ev.Tip.Height, ev.Tip.Hash, ev.Connected)
		}
	})
	if stack.mempool == nil {
		return
	}
	stack.mempool.OnTx(func(tx *mempool.Tx) {
		fee, _ := tx.Fee()
		var value uint64
		for _, o := range tx.Vout {
			value += o.Value
		}
		prevouts := make([]esplora.Outpoint, 0, len(tx.Vin))
		for _, in := range tx.Vin {
			prevouts = append(prevouts, esplora.Outpoint{Txid: in.PrevTxid, Vout: in.PrevVout})
		}
		front.OnMempoolTx(esplora.MempoolTx{Txid: tx.Txid, Descs: tx.Descs(), Weight: tx.Weight(), Fee: fee, Value: value, Prevouts: prevouts})
	})
	stack.mempool.OnResolved(func(tx *mempool.Tx, descs []bchain.AddrDesc) {
		front.OnMempoolTx(esplora.MempoolTx{Txid: tx.Txid, Descs: descs})
	})
	stack.mempool.OnRemoved(front.OnMempoolRemoved)
	if stack.projection != nil {
		stack.projection.OnRefresh(front.OnProjection)
	}
}

// enableAddressPrefix makes the index keep the address-prefix rows with
// -esploraaddressprefix (and always on an index built with them).
func enableAddressPrefix(e stackEnv, x *db.UtxoIndex) error {
	on, err := x.EnableAddressPrefix(e.o.Esplora.AddressPrefix, addressNamer{e.backend.Utxo})
	if err != nil {
		return fmt.Errorf("-esploraaddressprefix: %w", err)
	}
	if on && !e.o.Esplora.AddressPrefix {
		e.log.Info("the index keeps the address-prefix rows it was built with (-esploraaddressprefix)")
	}
	return nil
}

// addressNamer names a descriptor by its one address, for the
// address-prefix rows.
type addressNamer struct{ p bchain.UtxoParser }

func (n addressNamer) DescAddress(desc bchain.AddrDesc) (string, bool) {
	addrs, searchable, err := n.p.AddressesFromAddrDesc(desc)
	if err != nil || !searchable || len(addrs) != 1 {
		return "", false
	}
	return addrs[0], true
}

// frontServer is a front's http.Server as servers runs it.
type frontServer struct {
	name       string
	srv        *http.Server
	onShutdown func()
}

func (s *frontServer) Serve(ln net.Listener) error {
	if err := s.srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

func (s *frontServer) Shutdown(ctx context.Context) error {
	if s.onShutdown != nil {
		s.onShutdown()
	}
	return s.srv.Shutdown(ctx)
}
