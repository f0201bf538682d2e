package bchain

// EthChainKind is the family an Ethereum-type network belongs to: the
// networks of one kind share what differs from plain Ethereum (fee fields
// of receipts, header fields, node quirks). Code that treats a family
// specially switches on Backend.Params.EthKind.
type EthChainKind int

// The kinds of Ethereum-type networks served.
const (
	// EthKindL1 is Ethereum itself and its testnets (and dev chains).
	EthKindL1 EthChainKind = iota
	// EthKindOPStack is an OP-stack rollup (Optimism, Base): receipts carry
	// l1Fee, l1FeeScalar, l1GasPrice and l1GasUsed.
	EthKindOPStack
	// EthKindArbitrum is an Arbitrum chain (Arbitrum One, Arbitrum Nova).
	EthKindArbitrum
	// EthKindAvalanche is Avalanche's C-Chain, whose headers have their own
	// fields and whose node answers "unfinalized data" near the tip.
	EthKindAvalanche
	// EthKindPolygon is Polygon PoS (bor).
	EthKindPolygon
	// EthKindBSC is BNB Smart Chain.
	EthKindBSC
	// EthKindETC is Ethereum Classic.
	EthKindETC
)

// String names the kind for logs and tests.
func (k EthChainKind) String() string {
	switch k {
	case EthKindL1:
		return "l1"
	case EthKindOPStack:
		return "op-stack"
	case EthKindArbitrum:
		return "arbitrum"
	case EthKindAvalanche:
		return "avalanche"
	case EthKindPolygon:
		return "polygon"
	case EthKindBSC:
		return "bsc"
	case EthKindETC:
		return "etc"
	}
	return "unknown"
}

// IsL2 tells a rollup, whose fee is the receipt's effectiveGasPrice times
// the gas used, plus its own L1 part.
func (k EthChainKind) IsL2() bool { return k == EthKindOPStack || k == EthKindArbitrum }
