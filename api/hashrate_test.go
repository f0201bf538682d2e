package api

import (
	"encoding/json"
	"math/big"
	"os"
	"strconv"
	"testing"
)

// Work and difficulty against Bitcoin Core's own figures for mainnet.
func TestBlockWorkMainnet(t *testing.T) {
	// Core's getblockheader of block 170 (testdata): the chainwork of
	// blocks 0..170, all at 0x1d00ffff.
	raw, err := os.ReadFile("../bchain/coins/btc/testdata/core/getblockheader-170.json")
	if err != nil {
		t.Fatal(err)
	}
	var hdr struct {
		Result struct {
			Height    int64  `json:"height"`
			Bits      string `json:"bits"`
			Chainwork string `json:"chainwork"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &hdr); err != nil {
		t.Fatal(err)
	}
	want, ok := new(big.Int).SetString(hdr.Result.Chainwork, 16)
	if !ok || hdr.Result.Bits != "1d00ffff" {
		t.Fatalf("fixture: %+v", hdr.Result)
	}
	got := new(big.Int).Mul(BlockWork(0x1d00ffff), big.NewInt(hdr.Result.Height+1))
	if got.Cmp(want) != 0 {
		t.Errorf("chainwork of %d blocks: %x, want %x", hdr.Result.Height+1, got, want)
	}
	// Block 100000 (bits 1b04864c): Core's getblock difficulty.
	if d := strconv.FormatFloat(CoreDifficulty(0x1b04864c), 'g', 16, 64); d != "14484.1623612254" {
		t.Errorf("difficulty of 1b04864c: %v", d)
	}
	// Invalid compact targets have no work, as in GetBlockProof.
	for _, bits := range []uint32{0, 0x01003456, 0x04923456, 0xff123456} {
		if w := BlockWork(bits); w.Sign() != 0 {
			t.Errorf("work of %#x: %v, want 0", bits, w)
		}
	}
}

// getnetworkhashps and the daily rows on a small chain whose figures are
// worked by hand: block work 2^32+2^16+1 at 0x1d00ffff (0x100010001).
func TestComputeHashrateHistory(t *testing.T) {
	const w = 0x100010001
	mk := func(h uint32, ts int64, bits uint32) MiningBlock { return MiningBlock{Height: h, Time: ts, Bits: bits} }
	const d0 = 10 * day
	blocks := []MiningBlock{
		mk(0, d0-1000, 0x1d00ffff),
		mk(1, d0, 0x1d00ffff),         // exactly midnight: in the days ending d0 and d0+day
		mk(2, d0+600, 0x1d00ffff),     //
		mk(3, d0+1500, 0x1c7fff80),    // a change to twice the difficulty
		mk(4, d0+day+100, 0x1c7fff80), // the next day
	}
	h := ComputeHashrateHistory(blocks, d0+2*day+5, 0)
	w2 := float64(BlockWork(0x1c7fff80).Int64())
	want := []HashrateSample{
		{d0 - 1000, w / 1000.0}, // genesis row: getnetworkhashps(1, 1)
		{d0, w / 1000.0},        // day to d0: blocks 0 and 1 (count 2, last 1: the lookup cut to 1)
		// day to d0+day: blocks 1-3, lookup 3 from 3: work of 1..3 over 0..3's spread
		{d0 + day, (2*w + w2) / 2500.0},
		// day to d0+2day: block 4 alone: its work over 3..4's spread
		{d0 + 2*day, w2 / float64(day+100-1500)},
	}
	if len(h.Hashrates) != len(want) {
		t.Fatalf("hashrates %v, want %v", h.Hashrates, want)
	}
	for i := range want {
		if h.Hashrates[i] != want[i] {
			t.Errorf("hashrate %d: %v, want %v", i, h.Hashrates[i], want[i])
		}
	}
	if w2 != 2*w-1 && w2 != 2*w {
		t.Errorf("work of 0x1c7fff80: %v, want about %v", w2, 2*w)
	}
	wantDiff := []DifficultyChange{{d0 - 1000, 0, 1, 0}, {d0 + 1500, 3, CoreDifficulty(0x1c7fff80), 2}}
	if len(h.Difficulty) != 2 || h.Difficulty[0] != wantDiff[0] || h.Difficulty[1] != wantDiff[1] {
		t.Errorf("difficulty %v, want %v", h.Difficulty, wantDiff)
	}
	if h.CurrentHashrate != (2*w+2*w2)/float64(day+100+1000) || h.CurrentDifficulty != CoreDifficulty(0x1c7fff80) {
		t.Errorf("current %v %v", h.CurrentHashrate, h.CurrentDifficulty)
	}
	// A window keeps the rows from its start.
	if h := ComputeHashrateHistory(blocks, d0+2*day+5, d0+1); len(h.Hashrates) != 2 || len(h.Difficulty) != 1 {
		t.Errorf("since d0+1: %v %v", h.Hashrates, h.Difficulty)
	}
}

// BenchmarkHashrateAll is the "all" computation over a mainnet-sized
// chain (1,000,000 blocks, a retarget every 2,016, 10-minute blocks).
func BenchmarkHashrateAll(b *testing.B) {
	blocks := make([]MiningBlock, 1_000_000)
	bits := uint32(0x1d00ffff)
	for i := range blocks {
		if i > 0 && i%2016 == 0 {
			bits = 0x1c000000 | (0x7fffff - uint32(i/2016)*997)
		}
		blocks[i] = MiningBlock{Height: uint32(i), Time: 1231006505 + int64(i)*600, Bits: bits}
	}
	now := blocks[len(blocks)-1].Time + 100
	b.ReportAllocs()
	for b.Loop() {
		ComputeHashrateHistory(blocks, now, 0)
	}
}
