package mesh

import (
	"cmp"
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// The offline part (-mesh-offline): the Construction endpoints that need
// neither index nor node (derive, preprocess, payloads, combine, parse,
// hash), with /network/list and /network/options so that a client can
// find the network and the errors. They read nothing but the request and
// the chain's address rules, so a signing host can run them with no
// connection at all; every other endpoint answers errOffline.

// Codec is what the offline part needs of a chain: its addresses.
type Codec interface {
	AddrDesc(address string) (bchain.AddrDesc, error)
	DescAddress(desc bchain.AddrDesc) (string, bool)
}

// offlineRoutes are the endpoints NewOffline serves.
var offlineRoutes = map[string]bool{
	"/network/list": true, "/network/options": true,
	"/construction/derive": true, "/construction/preprocess": true, "/construction/payloads": true,
	"/construction/combine": true, "/construction/parse": true, "/construction/hash": true,
}

// NewOffline builds the offline front over the chain's address parser.
func NewOffline(addrs bchain.AddressParser, opts Options) *Server {
	// /network/options names the node's version; offline there is none.
	opts.NodeVersion = cmp.Or(opts.NodeVersion, "none (offline)")
	s := New(nil, nil, nil, opts)
	s.codec = parserCodec{addrs}
	for p := range s.routes {
		if !offlineRoutes[p] {
			s.routes[p] = func(context.Context, []byte) (any, error) {
				return nil, fail(errOffline, "%s needs the index or the node; this server runs with -mesh-offline", p)
			}
		}
	}
	return s
}

// parserCodec renders addresses as the online service does (one address
// per descriptor, or none).
type parserCodec struct{ p bchain.AddressParser }

func (c parserCodec) AddrDesc(address string) (bchain.AddrDesc, error) {
	desc, err := c.p.AddrDescFromAddress(address)
	if err != nil {
		return nil, fmt.Errorf("invalid address %q: %w", truncate(address, 80), err)
	}
	return desc, nil
}

func (c parserCodec) DescAddress(desc bchain.AddrDesc) (string, bool) {
	if len(desc) == 0 {
		return "", false
	}
	addrs, _, err := c.p.AddressesFromAddrDesc(desc)
	if err != nil || len(addrs) != 1 {
		return "", false
	}
	return addrs[0], true
}
