package api

import (
	"context"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// ProtocolErc4626 is Blockbook's name of the ERC-4626 vault protocol.
const ProtocolErc4626 = "erc4626"

// CheckProtocols refuses a protocols list as Blockbook does: any value on
// a chain without protocol data, an unknown name elsewhere.
func CheckProtocols(protocols []string, ethereumType bool) error {
	if len(protocols) == 0 {
		return nil
	}
	if !ethereumType {
		return userErr("protocols parameter is not supported on this coin")
	}
	for _, p := range protocols {
		if n := strings.ToLower(strings.TrimSpace(p)); n != "" && n != ProtocolErc4626 {
			return userErr("Unknown protocol: %s", p)
		}
	}
	return nil
}

func wantsErc4626(protocols []string) bool {
	for _, p := range protocols {
		if strings.EqualFold(strings.TrimSpace(p), ProtocolErc4626) {
			return true
		}
	}
	return false
}

// The vault calls (EIP-4626).
var (
	selAsset           = selector("asset()")
	selTotalAssets     = selector("totalAssets()")
	selConvertToAssets = selector("convertToAssets(uint256)")
	selConvertToShares = selector("convertToShares(uint256)")
	selPreviewDeposit  = selector("previewDeposit(uint256)")
	selPreviewRedeem   = selector("previewRedeem(uint256)")
)

func selector(sig string) []byte { return crypto.Keccak256([]byte(sig))[:4] }

// vaultCall is the call data of a vault method with an optional uint256.
func vaultCall(sel []byte, arg *big.Int) []byte {
	if arg == nil {
		return sel
	}
	out := make([]byte, 36)
	copy(out, sel)
	arg.FillBytes(out[4:])
	return out
}

// unitOf is one whole token, 10^decimals; nil past uint256 (Blockbook's
// bound of 77 decimals).
func unitOf(decimals int) *big.Int {
	if decimals < 0 || decimals > 77 {
		return nil
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)
}

const (
	// probeChunk bounds the vaults probed in one batch (two calls each).
	probeChunk = 64
	// maxVaultProbes bounds the tokens one request probes (four batches):
	// an address holding thousands of unknown tokens (airdrop spam) costs
	// the node at most that much per request; the rest are probed by the
	// next requests, since the answers are remembered (nonVaults).
	maxVaultProbes = 4 * probeChunk
	// nonVaultTTL is how long "not a vault" is believed (Blockbook's 15
	// minutes); maxNonVaults bounds that memory (cleared when full).
	nonVaultTTL  = 15 * time.Minute
	maxNonVaults = 100_000
)

// vaultCache keeps what Multicall3 told of vaults at one indexed block:
// snapshots and probe answers are dropped when the tip moves (a new block
// or a reorg); the asset of a vault once seen is kept, as Blockbook keeps
// it, so the next block needs one batch instead of two.
type vaultCache struct {
	mu     sync.Mutex
	height uint32
	tip    bchain.Hash
	snaps  map[string]*Erc4626Token // contract → snapshot; nil: not a vault
	probes map[string]bool          // contract → is a vault
	assets map[string]bchain.AddrDesc
	// nonVaults: contract → when a probe found it no vault, kept across
	// blocks for nonVaultTTL.
	nonVaults map[string]time.Time
	now       func() time.Time // nil: time.Now
}

func (c *vaultCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// at readies the cache for block tip: a later block (or another one at
// the same height, a reorg) replaces what it held; a request on an
// earlier one (begun before the last block) leaves it alone. The caller
// holds mu and reads or stores per-block answers only if c.tip is tip.
func (c *vaultCache) at(tip db.Tip) {
	if c.snaps == nil || c.tip != tip.Hash && tip.Height >= c.height {
		c.height, c.tip, c.snaps, c.probes = tip.Height, tip.Hash, map[string]*Erc4626Token{}, map[string]bool{}
	}
	if c.assets == nil {
		c.assets = map[string]bchain.AddrDesc{}
	}
	if c.nonVaults == nil || len(c.nonVaults) >= maxNonVaults {
		c.nonVaults = map[string]time.Time{}
	}
}

// markVaults sets protocols ["erc4626"] on the ERC20 tokens that are
// vaults at the view's tip: known vaults at once, the others probed
// (asset() and totalAssets() must both answer) in Multicall3 batches, at
// most maxVaultProbes of them (the others stay unmarked in this answer).
func (s *EthService) markVaults(ctx context.Context, v *view, tokens []Token) {
	c := &s.vaults
	c.mu.Lock()
	c.at(v.tip)
	current := c.tip == v.tip.Hash
	now := c.clock()
	var probe []int
	for i := range tokens {
		t := &tokens[i]
		if t.Standard != bchain.TokenERC20.String() || t.Contract == "" {
			continue
		}
		key := strings.ToLower(t.Contract)
		isVault, seen := c.probes[key]
		if _, known := c.assets[key]; known || current && isVault {
			t.Protocols = []string{ProtocolErc4626}
		} else if at, no := c.nonVaults[key]; no && now.Sub(at) < nonVaultTTL {
			continue
		} else if (!current || !seen) && len(probe) < maxVaultProbes {
			probe = append(probe, i)
		}
	}
	c.mu.Unlock()
	for start := 0; start < len(probe); start += probeChunk {
		chunk := probe[start:min(start+probeChunk, len(probe))]
		calls := make([]bchain.EthMulticall, 0, 2*len(chunk))
		descs := make([]bchain.AddrDesc, len(chunk))
		for j, i := range chunk {
			d, err := s.addrs.AddrDescFromAddress(tokens[i].Contract)
			if err != nil {
				return
			}
			descs[j] = d
			calls = append(calls, bchain.EthMulticall{Target: d, Data: selAsset}, bchain.EthMulticall{Target: d, Data: selTotalAssets})
		}
		res, err := s.eth.Multicall(ctx, calls, bchain.EthBlockTag(v.tip.Height))
		if err != nil {
			// Left unmarked; the next request asks again.
			s.log.Debug("erc4626 probe failed", "err", err)
			return
		}
		c.mu.Lock()
		for j, i := range chunk {
			asset := resultAddress(res[2*j])
			key := strings.ToLower(tokens[i].Contract)
			isVault := asset != nil && resultUint(res[2*j+1]) != nil
			if c.tip == v.tip.Hash { // not if a newer block took the cache meanwhile
				c.probes[key] = isVault
			}
			if isVault {
				c.assets[key] = asset
				tokens[i].Protocols = []string{ProtocolErc4626}
			} else {
				c.nonVaults[key] = now
			}
		}
		c.mu.Unlock()
	}
}

// vaultSnapshot is the contract's ERC-4626 data at the view's tip (nil:
// not a vault, or Multicall3 unavailable), cached for that block.
func (s *EthService) vaultSnapshot(ctx context.Context, v *view, ci *ContractInfo, desc bchain.AddrDesc) *Erc4626Token {
	key := strings.ToLower(ci.Contract)
	c := &s.vaults
	c.mu.Lock()
	c.at(v.tip)
	snap, cached := c.snaps[key]
	cached = cached && c.tip == v.tip.Hash
	asset := c.assets[key]
	c.mu.Unlock()
	if cached {
		return snap
	}
	snap, ok := s.readVault(ctx, v, ci, desc, asset)
	if !ok {
		return snap // a node failure: not cached, asked again next time
	}
	c.mu.Lock()
	if c.tip == v.tip.Hash { // not if a newer block took the cache meanwhile
		c.snaps[key] = snap
	}
	if snap != nil && snap.Asset != nil {
		if d, err := s.addrs.AddrDescFromAddress(snap.Asset.Contract); err == nil {
			c.assets[key] = d
		}
	}
	c.mu.Unlock()
	return snap
}

// readVault reads a vault's data through Multicall3, pinned to the tip:
// with the asset unknown, asset(), totalAssets() and the share-side
// conversions first, then the asset-side ones once the asset's decimals
// are known; with it known, all in one batch. ok is false on a node
// failure (the answer is then not cached).
func (s *EthService) readVault(ctx context.Context, v *view, ci *ContractInfo, desc, asset bchain.AddrDesc) (*Erc4626Token, bool) {
	at := bchain.EthBlockTag(v.tip.Height)
	out := &Erc4626Token{Share: &Erc4626TokenMetadata{Contract: ci.Contract, Name: ci.Name, Symbol: ci.Symbol, Decimals: ci.Decimals}}
	var errs []string
	shareUnit := unitOf(ci.Decimals)
	if shareUnit == nil {
		errs = append(errs, "share decimals: unsupported")
	}
	type sink struct {
		label string
		dst   **Amount
	}
	var calls []bchain.EthMulticall
	var sinks []sink
	add := func(label string, data []byte, dst **Amount) {
		calls = append(calls, bchain.EthMulticall{Target: desc, Data: data})
		sinks = append(sinks, sink{label, dst})
	}
	if asset == nil {
		add("asset", selAsset, nil)
	}
	add("totalAssets", vaultCall(selTotalAssets, nil), &out.TotalAssets)
	if shareUnit != nil {
		add("convertToAssets", vaultCall(selConvertToAssets, shareUnit), &out.ConvertToAssets1Share)
		add("previewRedeem", vaultCall(selPreviewRedeem, shareUnit), &out.PreviewRedeem1Share)
	}
	var assetUnit *big.Int
	if asset != nil {
		if assetUnit = s.vaultAsset(ctx, v, asset, out, &errs); assetUnit != nil {
			add("convertToShares", vaultCall(selConvertToShares, assetUnit), &out.ConvertToShares1Asset)
			add("previewDeposit", vaultCall(selPreviewDeposit, assetUnit), &out.PreviewDeposit1Asset)
		}
	}
	res, err := s.eth.Multicall(ctx, calls, at)
	if err != nil {
		s.log.Debug("erc4626 read failed", "contract", ci.Contract, "err", err)
		return nil, false
	}
	if asset == nil {
		// Detection: asset() a non-zero address and totalAssets() a number.
		if asset = resultAddress(res[0]); asset == nil || resultUint(res[1]) == nil {
			return nil, true
		}
		res, sinks = res[1:], sinks[1:]
		if assetUnit = s.vaultAsset(ctx, v, asset, out, &errs); assetUnit != nil {
			more, err := s.eth.Multicall(ctx, []bchain.EthMulticall{
				{Target: desc, Data: vaultCall(selConvertToShares, assetUnit)},
				{Target: desc, Data: vaultCall(selPreviewDeposit, assetUnit)},
			}, at)
			if err != nil {
				errs = append(errs, "asset-side multicall: "+err.Error())
			} else {
				res = append(res, more...)
				sinks = append(sinks, sink{"convertToShares", &out.ConvertToShares1Asset}, sink{"previewDeposit", &out.PreviewDeposit1Asset})
			}
		}
	}
	for i, sk := range sinks {
		if !res[i].Success {
			errs = append(errs, sk.label+": call reverted")
		} else if x := resultUint(res[i]); x == nil {
			errs = append(errs, sk.label+": result too short")
		} else {
			*sk.dst = (*Amount)(x)
		}
	}
	out.Error = strings.Join(errs, "; ")
	return out, true
}

// vaultAsset fills the asset's metadata (the index's, else the node's)
// and returns one whole asset unit; nil when its decimals are unknown,
// as Blockbook leaves the asset out then.
func (s *EthService) vaultAsset(ctx context.Context, v *view, asset bchain.AddrDesc, out *Erc4626Token, errs *[]string) *big.Int {
	md := &Erc4626TokenMetadata{Contract: s.addr(asset)}
	if ci, err := s.contractInfo(v, asset); err == nil && ci != nil {
		md.Name, md.Symbol, md.Decimals = ci.Name, ci.Symbol, ci.Decimals
	} else if nci, err := s.eth.ContractInfo(ctx, asset); err == nil && nci != nil {
		md.Name, md.Symbol, md.Decimals = nci.Name, nci.Symbol, nci.Decimals
	} else {
		*errs = append(*errs, "asset metadata unavailable")
		return nil
	}
	out.Asset = md
	unit := unitOf(md.Decimals)
	if unit == nil {
		*errs = append(*errs, "asset decimals: unsupported")
	}
	return unit
}

// resultUint decodes a uint256 answer (nil: reverted or too short).
func resultUint(r bchain.EthMulticallResult) *big.Int {
	if !r.Success || len(r.Data) < 32 {
		return nil
	}
	return new(big.Int).SetBytes(r.Data[:32])
}

// resultAddress decodes an address answer (nil: reverted, too short or
// the zero address).
func resultAddress(r bchain.EthMulticallResult) bchain.AddrDesc {
	x := resultUint(r)
	if x == nil || x.Sign() == 0 {
		return nil
	}
	return bchain.AddrDesc(r.Data[12:32])
}
