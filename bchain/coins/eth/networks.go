package eth

import "github.com/openexplorer/blockbook/bchain"

// network is one Ethereum-type network served under a Blockbook coin name.
type network struct {
	shortcut, label, netName string
	chainID                  uint64 // 0: accept whatever the node runs (dev chains)
	genesis                  string // block 0's hash where it is a public fact ("": the index's block 0)
	testnet, archive         bool
	public, intern           int // Blockbook's default public and internal ports
	kind                     bchain.EthChainKind
}

// Genesis hashes, public facts of each chain (client chain specs).
const (
	mainnetGenesis   = "d4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3" // also Ethereum Classic's
	sepoliaGenesis   = "25a5cc106eea7138acab33231d7160d69cb777ee0c2c553fcddf5138993e6dd9"
	hoodiGenesis     = "bbe312868b376a3001692a646dd2d7d1e4406380dfd86b98aa8a34d1557c971b"
	polygonGenesis   = "a9c28ce2141b56c474f1dc504bee9b01eb1bd7d1a507580d5519d4437a97de1b"
	bscGenesis       = "0d21840abff46b96c84b2ac9e10e4f5cdaeb5693cb665db62a2f3b02d2d57b5b"
	avalancheGenesis = "31ced5b9beb7f8782b014660da0cb18cc409f121f408186886e1ca3e8eeca96b"
)

// Chain ids of the networks; the coin name alone decides which applies.
const (
	chainEthereum  = 1
	chainETC       = 61
	chainSepolia   = 11155111
	chainHoodi     = 560048
	chainPolygon   = 137
	chainBSC       = 56
	chainArbitrum  = 42161
	chainNova      = 42170
	chainBase      = 8453
	chainOptimism  = 10
	chainAvalanche = 43114
	chainRobinhood = 4663  // Robinhood Chain, an Arbitrum Nitro chain
	chainRHTestnet = 46630 // its testnet (settles to Sepolia)
)

// networks are the coin names Blockbook serves with its Ethereum-type code
// (its configs/coins/*.json): label and shortcut are the config's coin
// facts, the ports its blockbook_public and blockbook_internal. The Archive
// variants trace blocks for internal transactions by default. The L2s keep
// no genesis here: their block0Hash is the index's block 0, as Blockbook's.
var networks = map[string]network{
	"Ethereum":                         {shortcut: "ETH", label: "Ethereum", netName: "mainnet", chainID: chainEthereum, genesis: mainnetGenesis, public: 9136, intern: 9036},
	"Ethereum Archive":                 {shortcut: "ETH", label: "Ethereum", netName: "mainnet", chainID: chainEthereum, genesis: mainnetGenesis, archive: true, public: 9116, intern: 9016},
	"Ethereum Testnet Sepolia":         {shortcut: "tSEP", label: "Ethereum Testnet Sepolia", netName: "sepolia", chainID: chainSepolia, genesis: sepoliaGenesis, testnet: true, public: 19176, intern: 19076},
	"Ethereum Testnet Sepolia Archive": {shortcut: "tSEP", label: "Ethereum Testnet Sepolia", netName: "sepolia", chainID: chainSepolia, genesis: sepoliaGenesis, testnet: true, archive: true, public: 19186, intern: 19086},
	"Ethereum Testnet Hoodi":           {shortcut: "tHOD", label: "Ethereum Hoodi", netName: "hoodi", chainID: chainHoodi, genesis: hoodiGenesis, testnet: true, public: 19106, intern: 19006},
	"Ethereum Testnet Hoodi Archive":   {shortcut: "tHOD", label: "Ethereum Hoodi", netName: "hoodi", chainID: chainHoodi, genesis: hoodiGenesis, testnet: true, archive: true, public: 19126, intern: 19026},
	"Ethereum Regtest":                 {shortcut: "rETH", label: "Ethereum Regtest", netName: "regtest", testnet: true, archive: true, public: 19136, intern: 19036},
	"Ethereum Classic":                 {shortcut: "ETC", label: "Ethereum Classic", netName: "mainnet", chainID: chainETC, genesis: mainnetGenesis, public: 9137, intern: 9037, kind: bchain.EthKindETC},

	"Polygon":                 {shortcut: "POL", label: "Polygon", netName: "mainnet", chainID: chainPolygon, genesis: polygonGenesis, public: 9170, intern: 9070, kind: bchain.EthKindPolygon},
	"Polygon Archive":         {shortcut: "POL", label: "Polygon", netName: "mainnet", chainID: chainPolygon, genesis: polygonGenesis, archive: true, public: 9172, intern: 9072, kind: bchain.EthKindPolygon},
	"BNB Smart Chain":         {shortcut: "BNB", label: "BNB Smart Chain", netName: "mainnet", chainID: chainBSC, genesis: bscGenesis, public: 9164, intern: 9064, kind: bchain.EthKindBSC},
	"BNB Smart Chain Archive": {shortcut: "BNB", label: "BNB Smart Chain", netName: "mainnet", chainID: chainBSC, genesis: bscGenesis, archive: true, public: 9165, intern: 9065, kind: bchain.EthKindBSC},
	"Avalanche":               {shortcut: "AVAX", label: "Avalanche", netName: "mainnet", chainID: chainAvalanche, genesis: avalancheGenesis, public: 9198, intern: 9098, kind: bchain.EthKindAvalanche},
	"Avalanche Archive":       {shortcut: "AVAX", label: "Avalanche", netName: "mainnet", chainID: chainAvalanche, genesis: avalancheGenesis, archive: true, public: 9199, intern: 9099, kind: bchain.EthKindAvalanche},

	"Arbitrum":              {shortcut: "ETH", label: "Arbitrum", netName: "mainnet", chainID: chainArbitrum, public: 9305, intern: 9205, kind: bchain.EthKindArbitrum},
	"Arbitrum Archive":      {shortcut: "ETH", label: "Arbitrum", netName: "mainnet", chainID: chainArbitrum, archive: true, public: 9306, intern: 9206, kind: bchain.EthKindArbitrum},
	"Arbitrum Nova":         {shortcut: "ETH", label: "Arbitrum Nova", netName: "mainnet", chainID: chainNova, public: 9307, intern: 9207, kind: bchain.EthKindArbitrum},
	"Arbitrum Nova Archive": {shortcut: "ETH", label: "Arbitrum Nova", netName: "mainnet", chainID: chainNova, archive: true, public: 9308, intern: 9208, kind: bchain.EthKindArbitrum},
	"Base":                  {shortcut: "ETH", label: "Base", netName: "mainnet", chainID: chainBase, public: 9309, intern: 9209, kind: bchain.EthKindOPStack},
	"Base Archive":          {shortcut: "ETH", label: "Base", netName: "mainnet", chainID: chainBase, archive: true, public: 9311, intern: 9211, kind: bchain.EthKindOPStack},
	"Optimism":              {shortcut: "ETH", label: "Optimism", netName: "mainnet", chainID: chainOptimism, public: 9300, intern: 9200, kind: bchain.EthKindOPStack},
	"Optimism Archive":      {shortcut: "ETH", label: "Optimism", netName: "mainnet", chainID: chainOptimism, archive: true, public: 9302, intern: 9202, kind: bchain.EthKindOPStack},
	// Blockbook ships Robinhood Chain as an archive mainnet and a testnet
	// whose config traces blocks (processInternalTransactions).
	"Robinhood Archive": {shortcut: "ETH", label: "Robinhood Chain", netName: "mainnet", chainID: chainRobinhood, archive: true, public: 9313, intern: 9213, kind: bchain.EthKindArbitrum},
	"Robinhood Testnet": {shortcut: "tETH", label: "Robinhood Chain Testnet", netName: "testnet", chainID: chainRHTestnet, testnet: true, public: 19177, intern: 19077, kind: bchain.EthKindArbitrum},
}

// NetworkInfo is what the registry knows of an Ethereum-type coin name,
// for tests and tools.
type NetworkInfo struct {
	ChainID                  uint64 // 0: any (dev chains)
	Kind                     bchain.EthChainKind
	Archive, Testnet         bool
	PublicPort, InternalPort int
}

// Network describes a registered Ethereum-type coin name.
func Network(coinName string) (NetworkInfo, bool) {
	n, ok := networks[coinName]
	if !ok {
		return NetworkInfo{}, false
	}
	return NetworkInfo{ChainID: n.chainID, Kind: n.kind, Archive: n.archive, Testnet: n.testnet, PublicPort: n.public, InternalPort: n.intern}, true
}

// NetworkNames lists the registered Ethereum-type coin names.
func NetworkNames() []string {
	out := make([]string, 0, len(networks))
	for name := range networks {
		out = append(out, name)
	}
	return out
}
