package api

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// EthService implements Service for Ethereum-type chains: txs, token
// transfers and internal transfers from the node and the Ethereum index,
// balances and nonces from the node; contracts and contract calls, and fee
// estimation where the node has it.
type EthService struct {
	core
	addrs bchain.AddressParser
	eth   bchain.EthereumChain
	txSrc bchain.EthTxSource // nil when the node does not describe txs
	caps  Capabilities
	// vaults caches ERC-4626 data per indexed block (eth_erc4626.go).
	vaults vaultCache
	// tron is set on Tron (tron.go): its names and chainExtraData.
	tron *tronParts
}

var (
	_ Service         = (*EthService)(nil)
	_ ContractQueries = (*EthService)(nil)
	_ ContractCaller  = (*EthService)(nil)
	_ FeeEstimator    = ethFees{}
)

// NewEthService returns the Ethereum-type query service.
func NewEthService(d Store, b *bchain.Backend, sync SyncStatus, cfg Config) *EthService {
	c := newCore(d, b, sync, cfg)
	c.hexPrefix = "0x" // hashes are 0x-prefixed on Ethereum, as Blockbook shows them
	b = c.backend      // gated by the liveness probe when there is one
	s := &EthService{core: c, addrs: b.Addresses, eth: b.Eth}
	s.caps = Capabilities{Chain: bchain.ChainEthereumType, Contracts: s, RPCCall: s}
	if b.Fees != nil {
		s.caps.FeeEstimates = ethFees{EthService: s, est: b.Fees}
	}
	if src, ok := b.Eth.(bchain.EthTxSource); ok {
		s.txSrc = src
		s.caps.TxSpecific, s.caps.RawTxs = ethTxSource{EthService: s, src: src}, ethTxSource{EthService: s, src: src}
	}
	return s
}

// Capabilities are the optional parts this service offers.
func (s *EthService) Capabilities() Capabilities { return s.caps }

// addrDesc validates an address parameter.
func (s *EthService) addrDesc(address string) (bchain.AddrDesc, error) {
	desc, err := s.addrs.AddrDescFromAddress(strings.TrimSpace(address))
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), bchain.ErrInvalidAddress.Error()+": ")
		return nil, &Error{Msg: fmt.Sprintf("Invalid address, %s", reason), Err: err}
	}
	return desc, nil
}

// AddrDesc validates an address for subscriptions.
func (s *EthService) AddrDesc(address string) (bchain.AddrDesc, error) {
	desc, err := s.addrs.AddrDescFromAddress(strings.TrimSpace(address))
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("Invalid address %q, %v", address, err), Err: err}
	}
	return desc, nil
}

// DescAddress renders a descriptor as its EIP-55 address.
func (s *EthService) DescAddress(desc bchain.AddrDesc) (string, bool) {
	addrs, _, err := s.addrs.AddressesFromAddrDesc(desc)
	if err != nil || len(addrs) != 1 {
		return "", false
	}
	return addrs[0], true
}

// addr renders a descriptor, or its hex when it is not an address.
func (s *EthService) addr(desc bchain.AddrDesc) string {
	if a, ok := s.DescAddress(desc); ok {
		return a
	}
	return "0x" + desc.String()
}

// BlockTxNotices describes the txs of a block the index just connected:
// each touches its sender, recipient, created contract and the parties of
// its internal and token transfers.
func (s *EthService) BlockTxNotices(_ context.Context, blk *bchain.Block) ([]TxNotice, error) {
	if blk.Eth == nil {
		return nil, nil
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	meta, err := db.ReadBlockMeta(v.snap, blk.Height)
	if err != nil || meta == nil || meta.Hash != blk.Hash {
		return nil, err
	}
	out := make([]TxNotice, 0, len(blk.Eth.Txs))
	for i := range blk.Eth.Txs {
		tx := &blk.Eth.Txs[i]
		descs := []bchain.AddrDesc{tx.From.AddrDesc()}
		if tx.To != nil {
			descs = append(descs, tx.To.AddrDesc())
		}
		if tx.Receipt != nil && tx.Receipt.ContractAddress != nil {
			descs = append(descs, tx.Receipt.ContractAddress.AddrDesc())
		}
		id, err := db.ReadInternalData(v.snap, tx.Hash)
		if err != nil {
			return nil, err
		}
		if id != nil {
			for _, it := range id.Transfers {
				descs = append(descs, it.From, it.To)
			}
		}
		for _, tt := range tx.Transfers {
			descs = append(descs, tt.From.AddrDesc(), tt.To.AddrDesc())
		}
		out = append(out, TxNotice{Txid: tx.Hash, Descs: descs, Render: func(ctx context.Context) (*Tx, error) {
			v, err := s.newView()
			if err != nil {
				return nil, err
			}
			defer v.release()
			return newEthRenderer(s, v).fromBlock(ctx, blk, tx)
		}})
	}
	return out, nil
}

// Search tells what a search term names: a block height or hash, a txid
// the node knows, an address, or an ENS name's address (eth_ens.go).
func (s *EthService) Search(ctx context.Context, q string) (*SearchResult, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil, userErr("Enter a block height or hash, a transaction id or an address")
	}
	notFound := &Error{Msg: fmt.Sprintf("No block, transaction or address matches '%s'", truncate(q, 100)), Err: ErrNotFound}
	if s.tron == nil && IsENSName(q) {
		// A name that does not resolve says why (expired, not found).
		addr, err := s.ResolveENS(ctx, q)
		if err != nil {
			return nil, err
		}
		return &SearchResult{Kind: SearchAddress, ID: addr}, nil
	}
	if bid, err := ParseBlockID(strings.TrimPrefix(strings.ToLower(q), "0x")); err == nil {
		v, err := s.newView()
		if err != nil {
			return nil, err
		}
		defer v.release()
		if bid.IsHeight {
			meta, err := db.ReadBlockMeta(v.snap, bid.Height)
			if err != nil {
				return nil, err
			}
			if meta == nil {
				return nil, notFound
			}
			return &SearchResult{Kind: SearchBlock, ID: fmt.Sprint(bid.Height)}, nil
		}
		if _, err := s.eth.Tx(ctx, bid.Hash); err == nil {
			return &SearchResult{Kind: SearchTx, ID: s.hashString(bid.Hash)}, nil
		} else if !errors.Is(err, bchain.ErrTxNotFound) {
			return nil, err
		}
		if _, _, err := s.resolveBlock(ctx, v, bid.Hash.String()); err == nil {
			return &SearchResult{Kind: SearchBlock, ID: bid.Hash.String()}, nil
		} else if !IsNotFound(err) {
			return nil, err
		}
		return nil, notFound
	}
	if desc, err := s.addrs.AddrDescFromAddress(q); err == nil {
		return &SearchResult{Kind: SearchAddress, ID: s.addr(desc)}, nil
	}
	return nil, notFound
}
