package server

import (
	"context"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// The explorer's Ethereum-type token pages: Blockbook's /nft/<contract>/<id>
// (Suite links to it), the token facts of a contract's address page
// (total supply), and the ENS name of an address reached by its name.

// defaultNFTGateway is Blockbook's IPFS gateway.
const defaultNFTGateway = "https://ipfs.io/ipfs/"

type nftPage struct {
	*api.NFT
	Meta *nftMeta
	// URILink is the token URI to follow (http(s), or ipfs through the
	// gateway); URIShort the URI shortened when it is long (a data: URI).
	URILink, URIShort string
	URILen            int
}

func (e *explorer) nft(r *http.Request) (*result, error) {
	if e.caps.Contracts == nil {
		return nil, e.caps.NotSupported(api.CapContracts)
	}
	n, err := e.caps.Contracts.NFT(r.Context(), r.PathValue("contract"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	page := &nftPage{NFT: n, Meta: e.nfts.read(r.Context(), n.URIWithID), URILink: e.nfts.link(n.URIWithID), URIShort: nftClip(n.URI, 160), URILen: len(n.URI)}
	return &result{tmpl: "nft", title: "NFT " + shortHash(n.ID) + " of " + shortHash(n.Contract.Contract), page: page}, nil
}

// tokenFacts is a contract's info with its total supply (nil when the
// contract does not answer totalSupply()).
type tokenFacts struct {
	*api.ContractInfo
	Supply *api.Amount
}

// contractFacts adds the total supply to a contract's info; a node error
// leaves it out (the page shows what the index has).
func (e *explorer) contractFacts(ctx context.Context, ci *api.ContractInfo) *tokenFacts {
	if ci == nil {
		return nil
	}
	f := &tokenFacts{ContractInfo: ci}
	if e.caps.Contracts != nil {
		s, err := e.caps.Contracts.TokenSupply(ctx, ci.Contract)
		if err != nil {
			e.log.Warn("total supply unavailable", "contract", ci.Contract, "err", err)
		}
		f.Supply = s
	}
	return f
}

// ensName is the ENS name the address page was asked by: the path itself
// (resolved by the service), or the name parameter the search adds, shown
// only when it resolves to the page's address now (so a link cannot put a
// name on any address); else the index's ENS alias of the address.
func (e *explorer) ensName(r *http.Request, a *api.Address) string {
	name := strings.ToLower(strings.TrimSpace(r.PathValue("address")))
	if api.IsENSName(name) {
		return name
	}
	if name = strings.ToLower(strings.TrimSpace(r.URL.Query().Get("name"))); api.IsENSName(name) {
		found, err := e.svc.Search(r.Context(), name)
		if err == nil && found.Kind == api.SearchAddress && strings.EqualFold(found.ID, a.Address) {
			return name
		}
	}
	if al, ok := a.AddressAliases[a.Address]; ok && al.Type == "ENS" {
		return al.Alias
	}
	return ""
}

// searchTarget is where the search sends a term: an ENS name's address
// page carries the name.
func searchTarget(q string, found *api.SearchResult) string {
	target := "/" + found.Kind + "/" + url.PathEscape(found.ID)
	if found.Kind == api.SearchAddress && api.IsENSName(q) {
		target += "?name=" + url.QueryEscape(strings.ToLower(strings.TrimSpace(q)))
	}
	return target
}

// l1Row is one OP-stack L1 fee row of a tx page.
type l1Row struct{ Key, ID, Value string }

// l1Rows are an OP-stack tx's L1 data fee fields, as Blockbook's tx page
// shows them (L1 gas used, L1 gas price in coin and Gwei, the scalar),
// with the L1 fee itself (a part of the tx's fee); none elsewhere.
func (e *explorer) l1Rows(es *api.EthereumSpecific) []l1Row {
	if es == nil {
		return nil
	}
	d, unit := e.decimals()
	var rows []l1Row
	if v, ok := new(big.Int).SetString(es.L1Fee.String(), 10); ok {
		rows = append(rows, l1Row{"L1 fee", "tx-l1fee", withUnit(formatAmount(v, d), unit)})
	}
	if v, err := es.L1GasUsed.Int64(); err == nil {
		rows = append(rows, l1Row{"L1 gas used", "tx-l1gasused", groupDigits(v)})
	}
	if p := es.L1GasPrice; p != nil {
		rows = append(rows, l1Row{"L1 gas price", "tx-l1gasprice", withUnit(formatAmount(amountInt(p), d), unit) + " (" + formatAmount(amountInt(p), 9) + " Gwei)"})
	}
	if es.L1FeeScalar != "" {
		rows = append(rows, l1Row{"L1 fee scalar", "tx-l1feescalar", es.L1FeeScalar})
	}
	return rows
}

// aliasOf is the name an answer's addressAliases give an address (an ENS
// name, a contract's name), "" when none: Blockbook shows it for the
// address on tx pages.
func aliasOf(m api.AddressAliasesMap, address string) string {
	return m[address].Alias
}
