package projected

// Params sets a chain's block capacity and the projection's shape.
type Params struct {
	// BlockWeight is the block's capacity in weight units; for chains
	// without segwit it is 4 × the maximum block size in bytes.
	BlockWeight uint32
	// Blocks is how many projected blocks to build; the last one takes
	// every tx left (mempool.space: 8).
	Blocks int
	// ReservedWeight and ReservedSigops are set aside for the coinbase
	// (mempool.space: 4,000 WU and 400).
	ReservedWeight uint32
	ReservedSigops uint32
	// MaxSigops caps a block's sigop cost (Bitcoin: 80,000); 0 disables the
	// check, for chains whose txs carry no sigop count.
	MaxSigops uint32
}

// Constants of mempool.space's builder and fee API.
const (
	defaultBlocks  = 8
	reservedWeight = 4_000
	reservedSigops = 400
	// fitMargin is the extra headroom mempool.space keeps when it checks
	// whether a package fits and when a block counts as full.
	fitMargin = 4_000
	// maxPackageTries is how many consecutive misfits close a nearly full
	// block.
	maxPackageTries = 1_000
	// bytesPerSigop is Bitcoin Core's DEFAULT_BYTES_PER_SIGOP: a tx weighs
	// at least 20 × its sigop cost (×4 for weight).
	bytesPerSigop = 20
)

func newParams(blockWeight, maxSigops uint32) Params {
	return Params{
		BlockWeight:    blockWeight,
		Blocks:         defaultBlocks,
		ReservedWeight: reservedWeight,
		ReservedSigops: reservedSigops,
		MaxSigops:      maxSigops,
	}
}

// Bitcoin is mempool.space's own configuration: 4,000,000 WU, 80,000 sigops.
func Bitcoin() Params { return newParams(4_000_000, 80_000) }

// Litecoin has Bitcoin's limits. MWEB data has its own weight budget apart
// from the 4,000,000 WU: callers pass the canonical (non-MWEB) weight.
func Litecoin() Params { return newParams(4_000_000, 80_000) }

// Dogecoin blocks hold 1 MB; its legacy sigop limit is not modelled.
func Dogecoin() Params { return newParams(4*1_000_000, 0) }

// Dash blocks hold 2 MB.
func Dash() Params { return newParams(4*2_000_000, 0) }

// Zcash blocks hold 2 MB.
func Zcash() Params { return newParams(4*2_000_000, 0) }

// BitcoinCash blocks hold 32 MB; its sigchecks limit is not modelled.
func BitcoinCash() Params { return newParams(4*32_000_000, 0) }

// ForBlockWeight is the Params of a chain whose blocks hold blockWeight
// WU (4 × the size limit for chains without segwit; 0 is Bitcoin's): with
// Bitcoin's weight, Bitcoin's sigops cap, otherwise none.
func ForBlockWeight(blockWeight uint32) Params {
	if blockWeight == 0 || blockWeight == 4_000_000 {
		return Bitcoin()
	}
	return newParams(blockWeight, 0)
}

// normalized fills zero fields with mempool.space's defaults.
func (p Params) normalized() Params {
	if p.BlockWeight == 0 {
		p.BlockWeight = 4_000_000
	}
	if p.Blocks < 1 {
		p.Blocks = defaultBlocks
	}
	return p
}
