package esplora

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"regexp"

	"github.com/openexplorer/blockbook/api"
)

// mempool.space's tx routes beyond Esplora's: the RBF history
// (tx/:txid/rbf, replacements, fullrbf/replacements), validate-address,
// and txs/test and txs/package (under /api and /api/v1), which need RPCs
// the nodes we run on lack.

// mpAddressArgRE is mempool.space's ADDRESS_REGEX for validate-address.
var mpAddressArgRE = regexp.MustCompile(`^[a-zA-Z0-9]{2,120}$`)

// mpTxsLimit is mempool.space's limit of txs in a txs/test or txs/package
// body.
const mpTxsLimit = 25

func (s *Server) replacementsCap() (api.ReplacementQueries, error) {
	if s.caps.Replacements == nil {
		return nil, mpError(http.StatusNotFound, s.caps.NotSupported(api.CapReplacements).Error())
	}
	return s.caps.Replacements, nil
}

// txRbf answers tx/:txid/rbf.
func (s *Server) txRbf(ctx context.Context, txid string) (*reply, error) {
	if !blockHashRE.MatchString(txid) {
		return nil, mpError(http.StatusBadRequest, "Invalid transaction ID")
	}
	r, err := s.replacementsCap()
	if err != nil {
		return nil, err
	}
	h, err := r.TxRbf(ctx, lower(txid))
	if err != nil {
		return nil, err
	}
	return jsonReply(h)
}

// replacements answers replacements and fullrbf/replacements.
func (s *Server) replacements(ctx context.Context, fullOnly bool) (*reply, error) {
	r, err := s.replacementsCap()
	if err != nil {
		return nil, err
	}
	return jsonReply(r.Replacements(ctx, fullOnly))
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// addressInfo is Bitcoin Core's validateaddress, which mempool.space
// forwards.
type addressInfo struct {
	IsValid        bool    `json:"isvalid"`
	Address        string  `json:"address,omitempty"`
	ScriptPubKey   string  `json:"scriptPubKey,omitempty"`
	IsScript       *bool   `json:"isscript,omitempty"`
	IsWitness      *bool   `json:"iswitness,omitempty"`
	WitnessVersion *int    `json:"witness_version,omitempty"`
	WitnessProgram string  `json:"witness_program,omitempty"`
	Error          *string `json:"error,omitempty"`
	ErrorLocations *[]int  `json:"error_locations,omitempty"`
}

// invalidAddressText is Bitcoin Core's validateaddress error for a string
// that is no address of the network.
const invalidAddressText = "Invalid or unsupported Segwit (Bech32) or Base58 encoding."

// validateAddress answers validate-address/:address from the chain's
// address parser, in validateaddress's shape.
func (s *Server) validateAddress(address string) (*reply, error) {
	if !mpAddressArgRE.MatchString(address) {
		return nil, mpError(http.StatusBadRequest, "Invalid address")
	}
	script, err := s.svc.AddrDesc(address)
	if err != nil || len(script) == 0 {
		msg := invalidAddressText
		return jsonReply(addressInfo{Error: &msg, ErrorLocations: &[]int{}})
	}
	t, f := true, false
	out := addressInfo{IsValid: true, Address: address, ScriptPubKey: hex.EncodeToString(script), IsScript: &f, IsWitness: &f}
	switch n := len(script); {
	case n == 23 && script[0] == 0xa9 && script[1] == 0x14 && script[22] == 0x87: // P2SH
		out.IsScript = &t
	case n >= 4 && n <= 42 && (script[0] == 0 || script[0] >= 0x51 && script[0] <= 0x60) && int(script[1]) == n-2:
		v := 0
		if script[0] != 0 {
			v = int(script[0]) - 0x50
		}
		out.IsWitness, out.WitnessVersion, out.WitnessProgram = &t, &v, hex.EncodeToString(script[2:])
		// Core calls P2WSH and taproot scripts; of unknown versions it
		// says neither.
		switch {
		case n == 34 && v <= 1:
			out.IsScript = &t
		case v > 1 || n != 22:
			out.IsScript = nil
		}
	}
	return jsonReply(out)
}

// txsUnsupported answers txs/test and txs/package: the body is checked as
// mempool.space checks it, then the node's lack of the RPC is the answer.
func (s *Server) txsUnsupported(r *http.Request, rpc string) (*reply, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1))
	if err != nil {
		return nil, mpError(http.StatusBadRequest, "cannot read the request body")
	}
	if len(body) > maxBodySize {
		return nil, mpError(http.StatusRequestEntityTooLarge, "Request body too large")
	}
	var txs []string
	if json.Unmarshal(body, &txs) != nil {
		return nil, mpError(http.StatusBadRequest, "Invalid request body (should be an array of hexadecimal strings)")
	}
	if len(txs) > mpTxsLimit {
		return nil, mpError(http.StatusBadRequest, "Exceeded maximum of 25 transactions")
	}
	for _, t := range txs {
		if b, err := hex.DecodeString(t); err != nil || len(b) == 0 {
			return nil, mpError(http.StatusBadRequest, "Invalid hex string")
		}
	}
	// mempool.space answers a node's RPC failure with a 400 too.
	return nil, mpError(http.StatusBadRequest, rpc+" RPC error: not available, the node (btcd, or litecoind 0.21) has no "+rpc)
}
