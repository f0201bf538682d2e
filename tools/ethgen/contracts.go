// Package ethgen deploys test contracts on an Ethereum dev chain, sends txs
// of every type and runs a fixed scenario whose effects it records in a
// Ledger: the oracle an indexer test compares the indexer against. It is
// the Ethereum counterpart of tools/chaingen and runs on tools/gethdev.
//
// The contracts are small Solidity sources in contracts/, compiled by
// contracts/compile.mjs (pinned npm solc) into contracts/build/*.json, which
// are committed and embedded here, so Go tests need neither node nor solc.
package ethgen

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

//go:embed contracts/build/*.json
var buildFS embed.FS

// Names of the embedded contracts.
const (
	TokenContract        = "Token"        // ERC20, string name/symbol, 18 decimals
	Bytes32TokenContract = "Bytes32Token" // ERC20 with bytes32 name/symbol
	NFTContract          = "NFT"          // ERC721
	MetaNFTContract      = "MetaNFT"      // ERC721 with a URI per token (the explorer's NFT page)
	MultiTokenContract   = "MultiToken"   // ERC1155
	SplitterContract     = "Splitter"     // forwards msg.value via internal calls
	ReverterContract     = "Reverter"     // moves value in reverted frames
	FactoryContract      = "Factory"      // creates Child with CREATE
	ChildContract        = "Child"        // created by Factory, can selfdestruct
	StakingPoolContract  = "StakingPool"  // a staking pool's per-address read methods
	ENSRegistrarContract = "ENSRegistrar" // emits ENS's NameRegistered event
	TestUSDContract      = "TestUSD"      // ERC20 with 6 decimals (OpenZeppelin's ERC20)
	TestVaultContract    = "TestVault"    // OpenZeppelin's ERC-4626 vault, 3 decimals of offset
)

// Contract is a compiled contract: its ABI and creation bytecode.
type Contract struct {
	Name     string
	ABI      abi.ABI
	Bytecode []byte
}

var (
	loadOnce  sync.Once
	contracts map[string]*Contract
	loadErr   error
)

// Contracts returns all embedded contracts by name.
func Contracts() (map[string]*Contract, error) {
	loadOnce.Do(func() { contracts, loadErr = loadContracts() })
	return contracts, loadErr
}

// ContractNames lists the embedded contracts, sorted.
func ContractNames() []string {
	cs, _ := Contracts()
	names := make([]string, 0, len(cs))
	for n := range cs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadContract returns one embedded contract.
func LoadContract(name string) (*Contract, error) {
	cs, err := Contracts()
	if err != nil {
		return nil, err
	}
	c, ok := cs[name]
	if !ok {
		return nil, fmt.Errorf("ethgen: no contract %q", name)
	}
	return c, nil
}

// MustContract is LoadContract for names known to exist.
func MustContract(name string) *Contract {
	c, err := LoadContract(name)
	if err != nil {
		panic(err)
	}
	return c
}

func loadContracts() (map[string]*Contract, error) {
	files, err := buildFS.ReadDir("contracts/build")
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Contract)
	for _, f := range files {
		data, err := buildFS.ReadFile("contracts/build/" + f.Name())
		if err != nil {
			return nil, err
		}
		c, err := parseContract(f.Name(), data)
		if err != nil {
			return nil, err
		}
		out[c.Name] = c
	}
	return out, nil
}

// parseContract reads a build file ({contractName, abi, bytecode}).
func parseContract(file string, data []byte) (*Contract, error) {
	var raw struct {
		ContractName string          `json:"contractName"`
		ABI          json.RawMessage `json:"abi"`
		Bytecode     hexutil.Bytes   `json:"bytecode"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("ethgen: %s: %w", file, err)
	}
	parsed, err := abi.JSON(bytes.NewReader(raw.ABI))
	if err != nil {
		return nil, fmt.Errorf("ethgen: %s abi: %w", file, err)
	}
	return &Contract{Name: raw.ContractName, ABI: parsed, Bytecode: raw.Bytecode}, nil
}

// DeployData is the creation code followed by the ABI-encoded constructor
// arguments.
func (c *Contract) DeployData(args ...any) ([]byte, error) {
	packed, err := c.ABI.Pack("", args...)
	if err != nil {
		return nil, fmt.Errorf("ethgen: %s constructor: %w", c.Name, err)
	}
	return append(append([]byte(nil), c.Bytecode...), packed...), nil
}

// Calldata ABI-encodes a call of method (for overloads, the name abigen
// gives them, e.g. "safeTransferFrom0").
func (c *Contract) Calldata(method string, args ...any) ([]byte, error) {
	data, err := c.ABI.Pack(method, args...)
	if err != nil {
		return nil, fmt.Errorf("ethgen: %s.%s: %w", c.Name, method, err)
	}
	return data, nil
}

// MustCalldata is Calldata that panics on argument mistakes (programming
// errors in the scenario).
func (c *Contract) MustCalldata(method string, args ...any) []byte {
	data, err := c.Calldata(method, args...)
	if err != nil {
		panic(err)
	}
	return data
}

// Bytes32String pads s into a bytes32 value, as the Bytes32Token stores
// its name and symbol.
func Bytes32String(s string) [32]byte {
	var b [32]byte
	copy(b[:], s)
	return b
}

// Bytes32ToString strips the zero padding of a bytes32 string.
func Bytes32ToString(b [32]byte) string {
	return strings.TrimRight(string(b[:]), "\x00")
}

// ContractAddress is the address of a contract created by sender with
// nonce (CREATE).
func ContractAddress(sender common.Address, nonce uint64) common.Address {
	return crypto.CreateAddress(sender, nonce)
}
