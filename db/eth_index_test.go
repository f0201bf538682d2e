package db

import (
	"context"
	"fmt"
	"math/big"
	"math/rand"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// ethSynth builds random Ethereum-type blocks over a few accounts and
// token contracts: value transfers, contract creations, ERC20, ERC721 and
// ERC1155 transfers (mints from the zero address included), internal
// transfers and selfdestructs; and keeps the holdings a replay must find.
type ethSynth struct {
	rng      *rand.Rand
	blocks   []*bchain.Block
	accounts []bchain.EthAddress
	tokens   map[bchain.EthAddress]bchain.TokenStandard
	nftOwner map[string]bchain.EthAddress // contract‖id → owner
	erc20    map[string]*big.Int          // contract‖holder → balance
}

func newEthSynth(seed int64) *ethSynth {
	s := &ethSynth{rng: rand.New(rand.NewSource(seed)), tokens: map[bchain.EthAddress]bchain.TokenStandard{},
		nftOwner: map[string]bchain.EthAddress{}, erc20: map[string]*big.Int{}}
	for i := range 6 {
		s.accounts = append(s.accounts, bchain.EthAddress{0xa0, byte(i + 1)})
	}
	for i, std := range []bchain.TokenStandard{bchain.TokenERC20, bchain.TokenERC721, bchain.TokenERC1155} {
		s.tokens[bchain.EthAddress{0xc0, byte(i + 1)}] = std
	}
	return s
}

// pick returns a known account, or now and then a new one, so that late
// blocks hold first meetings (of addresses, and of tokens per address).
func (s *ethSynth) pick() bchain.EthAddress {
	if s.rng.Intn(6) == 0 {
		s.accounts = append(s.accounts, bchain.EthAddress{0xa0, byte(len(s.accounts) + 1), byte(len(s.accounts) >> 8)})
		return s.accounts[len(s.accounts)-1]
	}
	return s.accounts[s.rng.Intn(len(s.accounts))]
}

func (s *ethSynth) next(salt string) *bchain.Block {
	h := uint32(len(s.blocks))
	blk := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: h, Hash: synthHash("eth", h, salt), Time: 1700000000 + int64(h)*12, Size: 600}}
	if h > 0 {
		blk.Prev = s.blocks[h-1].Hash
	}
	eb := &bchain.EthBlock{Traced: true}
	for i := range 1 + s.rng.Intn(5) {
		tx := bchain.EthTx{Hash: synthHash("ethtx", h, i, salt), From: s.pick(), Value: big.NewInt(int64(s.rng.Intn(1000))),
			Receipt: &bchain.EthReceipt{Status: 1}, Internal: &bchain.EthInternalData{}}
		switch s.rng.Intn(5) {
		case 0: // a creation, sometimes creating another contract inside
			c := bchain.EthAddress{0xd0, byte(h), byte(i)}
			tx.Receipt.ContractAddress = &c
			tx.Internal.Type = bchain.EthInternalCreate
			if s.rng.Intn(2) == 0 {
				tx.Internal.Transfers = append(tx.Internal.Transfers, bchain.EthInternalTransfer{Type: bchain.EthInternalCreate,
					From: c, To: bchain.EthAddress{0xd1, byte(h), byte(i)}, Value: new(big.Int)})
			}
		case 1: // internal transfers and a selfdestruct
			to := s.pick()
			tx.To = &to
			tx.Internal.Transfers = append(tx.Internal.Transfers,
				bchain.EthInternalTransfer{From: to, To: s.pick(), Value: big.NewInt(5)},
				bchain.EthInternalTransfer{Type: bchain.EthInternalSelfDestruct, From: bchain.EthAddress{0xd0, byte(s.rng.Intn(int(h) + 1))}, To: s.pick(), Value: big.NewInt(1)})
		default:
			to := s.pick()
			tx.To = &to
			if s.rng.Intn(8) == 0 { // failed: no logs, no value moved
				tx.Receipt.Status, tx.Internal.Error = 0, "execution reverted"
			} else {
				tx.Transfers = s.tokenTransfers(3)
			}
		}
		eb.Txs = append(eb.Txs, tx)
	}
	blk.Eth = eb
	s.blocks = append(s.blocks, blk)
	return blk
}

// tokenTransfers returns up to n transfers that respect current ownership.
func (s *ethSynth) tokenTransfers(n int) []bchain.TokenTransfer {
	var out []bchain.TokenTransfer
	for range 1 + s.rng.Intn(n) {
		contract := bchain.EthAddress{0xc0, byte(1 + s.rng.Intn(3))}
		std := s.tokens[contract]
		from, to := s.pick(), s.pick()
		if s.rng.Intn(4) == 0 {
			from = bchain.EthAddress{} // a mint
		}
		t := bchain.TokenTransfer{Standard: std, Contract: contract, From: from, To: to}
		switch std {
		case bchain.TokenERC20:
			t.Value = big.NewInt(int64(1 + s.rng.Intn(100)))
			s.addERC20(contract, from, new(big.Int).Neg(t.Value))
			s.addERC20(contract, to, t.Value)
		case bchain.TokenERC721:
			id := big.NewInt(int64(s.rng.Intn(6)))
			key := string(contract[:]) + id.String()
			owner, minted := s.nftOwner[key]
			if minted {
				from = owner
			} else {
				from = bchain.EthAddress{}
			}
			t.From, t.Value, t.TokenID = from, big.NewInt(1), id
			s.nftOwner[key] = to
		case bchain.TokenERC1155:
			t.Value, t.TokenID = big.NewInt(int64(1+s.rng.Intn(9))), big.NewInt(int64(s.rng.Intn(3)))
		}
		out = append(out, t)
	}
	return out
}

func (s *ethSynth) addERC20(contract, holder bchain.EthAddress, v *big.Int) {
	if holder == (bchain.EthAddress{}) {
		return
	}
	k := string(contract[:]) + string(holder[:])
	if s.erc20[k] == nil {
		s.erc20[k] = new(big.Int)
	}
	s.erc20[k].Add(s.erc20[k], v)
}

func (s *ethSynth) refill(height uint32, hash bchain.Hash) (*bchain.Block, error) {
	if int(height) >= len(s.blocks) || s.blocks[height].Hash != hash {
		return nil, fmt.Errorf("no block %d %s", height, hash)
	}
	return s.blocks[height], nil
}

func openEthTestDB(t testing.TB) *DB {
	t.Helper()
	d, err := Open(Options{Path: t.TempDir(), ChainType: bchain.ChainEthereumType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

var testContractSource ContractSource = func(_ context.Context, c bchain.AddrDesc) (*bchain.EthContractInfo, error) {
	return &bchain.EthContractInfo{Name: fmt.Sprintf("Token %x", []byte(c[:2])), Symbol: "TK", Decimals: 18}, nil
}

func newEthTestIndex(t testing.TB, keep int, blocks []*bchain.Block) *EthIndex {
	t.Helper()
	x := NewEthIndex(openEthTestDB(t), keep, testContractSource)
	for _, b := range blocks {
		connectEth(t, x, b)
	}
	return x
}

// connectEth connects b as the sync worker does: prepare, then connect.
func connectEth(t testing.TB, x *EthIndex, b *bchain.Block) {
	t.Helper()
	if err := x.PrepareBlock(context.Background(), b); err != nil {
		t.Fatalf("prepare %d: %v", b.Height, err)
	}
	if err := x.ConnectBlock(b); err != nil {
		t.Fatalf("connect %d: %v", b.Height, err)
	}
}

// Disconnecting any number of blocks ends byte-identical to a fresh sync
// of the shorter chain, rollback window refilled included.
func TestEthDisconnectMirrorsConnect(t *testing.T) {
	chain := newEthSynth(7)
	for range 40 {
		chain.next("")
	}
	for _, keep := range []int{1, 5, 300} {
		for _, depth := range []int{1, 13, 40} {
			t.Run(fmt.Sprintf("keep=%d/depth=%d", keep, depth), func(t *testing.T) {
				a := newEthTestIndex(t, keep, chain.blocks)
				for i := range depth {
					if _, _, err := a.DisconnectTip(chain.refill); err != nil {
						t.Fatalf("disconnect %d: %v", i, err)
					}
				}
				b := newEthTestIndex(t, keep, chain.blocks[:40-depth])
				diffs, err := Diff(a.db, b.db, ColumnFamilies(bchain.ChainEthereumType), 10)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range diffs {
					t.Error(d)
				}
			})
		}
	}
}

// The stored holdings equal a replay of the transfers.
func TestEthHoldingsMatchReplay(t *testing.T) {
	chain := newEthSynth(3)
	for range 60 {
		chain.next("")
	}
	x := newEthTestIndex(t, 10, chain.blocks)
	checked := 0
	for k, want := range chain.erc20 {
		contract, holder := bchain.AddrDesc(k[:EthAddrLen]), bchain.AddrDesc(k[EthAddrLen:])
		ac, err := ReadAddrContracts(x.db, holder)
		if err != nil || ac == nil {
			t.Fatalf("%x: %v", holder, err)
		}
		for _, c := range ac.Contracts {
			if string(c.Contract) == string(contract) {
				checked++
				if c.Balance.Cmp(want) != 0 {
					t.Errorf("%x holds %s of %x, want %s", []byte(holder), c.Balance, []byte(contract), want)
				}
			}
		}
	}
	owners := 0
	for k, owner := range chain.nftOwner {
		contract, id := bchain.AddrDesc(k[:EthAddrLen]), k[EthAddrLen:]
		ac, err := ReadAddrContracts(x.db, owner.AddrDesc())
		if err != nil || ac == nil {
			t.Fatalf("%x: %v", owner, err)
		}
		found := false
		for _, c := range ac.Contracts {
			if string(c.Contract) != string(contract) {
				continue
			}
			for _, v := range c.Values {
				found = found || (v.ID.String() == id && v.Value.Int64() == 1)
			}
		}
		if !found {
			t.Errorf("%s does not hold NFT %s", owner, id)
		}
		owners++
	}
	if checked < 5 || owners < 3 {
		t.Fatalf("replay too thin: %d ERC20 holdings, %d NFTs", checked, owners)
	}
	info, err := ReadContractInfo(x.db, bchain.EthAddress{0xc0, 2}.AddrDesc())
	if err != nil || info == nil || info.Standard() != bchain.TokenERC721 || info.Name != "Token c002" {
		t.Fatalf("contract info %+v, %v", info, err)
	}
}

// degrade returns blk as a node whose trace failed would give it: no
// internal data at all.
func degrade(blk *bchain.Block) *bchain.Block {
	d := *blk
	eb := *blk.Eth
	eb.Txs = slices.Clone(eb.Txs)
	for i := range eb.Txs {
		eb.Txs[i].Internal = nil
	}
	eb.TraceError = "debug_traceBlockByHash: timeout"
	d.Eth = &eb
	return &d
}

// Blocks indexed while tracing failed, amended once tracing works, end
// byte-identical to a sync of the fully traced chain, inside and outside
// the rollback window.
func TestEthRetryTracesAmendsExactly(t *testing.T) {
	chain := newEthSynth(11)
	for range 30 {
		chain.next("")
	}
	failed := map[uint32]bool{3: true, 10: true, 11: true, 27: true, 29: true}
	for _, keep := range []int{1, 300} {
		t.Run(fmt.Sprintf("keep=%d", keep), func(t *testing.T) {
			var blocks []*bchain.Block
			for _, b := range chain.blocks {
				if failed[b.Height] {
					b = degrade(b)
				}
				blocks = append(blocks, b)
			}
			x := newEthTestIndex(t, keep, blocks)
			hs, err := x.TraceErrors()
			if err != nil || len(hs) != len(failed) {
				t.Fatalf("trace errors at %v, %v", hs, err)
			}
			// Still failing: nothing changes.
			stillFailing := func(h uint32, hash bchain.Hash) (*bchain.Block, error) { return degrade(chain.blocks[h]), nil }
			if n, err := x.RetryTraces(context.Background(), stillFailing); n != 0 || err != nil {
				t.Fatalf("retry with failing traces: %d, %v", n, err)
			}
			if n, err := x.RetryTraces(context.Background(), chain.refill); n != len(failed) || err != nil {
				t.Fatalf("retry: %d amended, %v", n, err)
			}
			fresh := newEthTestIndex(t, keep, chain.blocks)
			diffs, err := Diff(x.db, fresh.db, ColumnFamilies(bchain.ChainEthereumType), 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}
