package zec

import (
	"bytes"
	"compress/bzip2"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	xblake2b "golang.org/x/crypto/blake2b"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

func readBlock(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".bin.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	raw, err := io.ReadAll(bzip2.NewReader(f))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return raw
}

func mainParser() *Parser { return NewParser(MainNetParams, MainNetPrefixes) }
func testParser() *Parser { return NewParser(TestNetParams, TestNetPrefixes) }

func TestParamsZcash(t *testing.T) {
	for _, tc := range []struct {
		name, shortcut, genesisBlock, p2pkh, p2sh string
		slip44                                    uint32
		public, internal                          int
		parser                                    *Parser
	}{
		{"Zcash", "ZEC", "block-main-0-000-000", "t1", "t3", 133, 9132, 9032, mainParser()},
		{"Zcash Testnet", "TAZ", "block-test-0-000-000", "tm", "t2", 1, 19132, 19032, testParser()},
	} {
		n, ok := btc.NetworkFor(tc.name)
		if !ok {
			t.Fatalf("%s is not registered", tc.name)
		}
		if n.Shortcut != tc.shortcut || n.Slip44 != tc.slip44 || n.PublicPort != tc.public || n.InternalPort != tc.internal {
			t.Errorf("%s: network %+v", tc.name, n)
		}
		// The genesis block's recomputed hash is the one the params name.
		blk, err := tc.parser.ParseBlock(readBlock(t, tc.genesisBlock))
		if err != nil {
			t.Fatalf("%s genesis: %v", tc.name, err)
		}
		if blk.Hash != btc.DisplayHash(*n.Params.GenesisHash) {
			t.Errorf("%s: genesis block hashes to %s, params say %s", tc.name, blk.Hash, n.Params.GenesisHash)
		}
		if blk.MerkleRoot != btctest.MerkleRoot(blk.Txs) {
			t.Errorf("%s genesis: merkle root mismatch", tc.name)
		}
		// Both address kinds round-trip with their network's leading characters.
		hash := bytes.Repeat([]byte{0x5a}, 20)
		for _, p := range []struct {
			prefix [2]byte
			lead   string
		}{{tc.parser.prefixes.PubKeyHash, tc.p2pkh}, {tc.parser.prefixes.ScriptHash, tc.p2sh}} {
			addr := encodeAddress(p.prefix, hash)
			if !strings.HasPrefix(addr, p.lead) || len(addr) != 35 {
				t.Errorf("%s: address %s does not start with %s", tc.name, addr, p.lead)
			}
			desc, err := tc.parser.AddrDescFromAddress(addr)
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.name, addr, err)
			}
			back, ok, err := tc.parser.AddressesFromAddrDesc(desc)
			if err != nil || !ok || len(back) != 1 || back[0] != addr {
				t.Errorf("%s: %s -> %x -> %v %v %v", tc.name, addr, desc, back, ok, err)
			}
		}
	}
	// A mainnet address is not a testnet one, and vice versa.
	if _, err := testParser().AddrDescFromAddress("t1Y4yL14ACHaAbjemkdpW7nYNHWnv1yQbDA"); err == nil {
		t.Error("testnet parser accepted a t1 address")
	}
	if _, err := mainParser().AddrDescFromAddress("tmGz4M4P2m3aPTriH3b1pzukMxhWykpVGni"); err == nil {
		t.Error("mainnet parser accepted a tm address")
	}
	for _, bad := range []string{"", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "t1Y4yL14ACHaAbjemkdpW7nYNHWnv1yQbDB", strings.Repeat("t", 200)} {
		if _, err := mainParser().AddrDescFromAddress(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestBlake2bPersonal checks the BLAKE2b written here: RFC 7693's "abc"
// vector, and agreement with x/crypto without personalization.
func TestBlake2bPersonal(t *testing.T) {
	s := newBlake2b(64, nil)
	_, _ = s.Write([]byte("abc"))
	want := "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
	if got := hex.EncodeToString(s.Sum()); got != want {
		t.Errorf("BLAKE2b-512(abc) = %s", got)
	}
	for _, n := range []int{0, 1, 127, 128, 129, 256, 1000} {
		msg := bytes.Repeat([]byte{byte(n)}, n)
		ref := xblake2b.Sum256(msg)
		s := newBlake2b(32, nil)
		_, _ = s.Write(msg[:n/3])
		_, _ = s.Write(msg[n/3:])
		if got := s.Sum(); !bytes.Equal(got, ref[:]) {
			t.Errorf("len %d: %x, x/crypto says %x", n, got, ref)
		}
	}
}

// blockbookTx is a tx from Blockbook's own Zcash parser tests with the
// outputs' addresses and values recorded there.
type blockbookTx struct {
	hex, txid string
	version   int32
	outs      []string
	values    []uint64
	joinSplit int
}

var blockbookTxs = []blockbookTx{
	{
		hex:     "01000000019cafb5c287980e6e5afb47339f6c1c81136d8255f5bd5226b36b01288494c46f000000006b483045022100c92b2f3c54918fa26288530c63a58197ea4974e5b6d92db792dd9717e6d9183c02204e577254213675466a6adad3ae6e9384cf8269fb2dd9943b86fac0c0ad8e3f98012102c99dab469e63b232488b3e7acb9cfcab7e5755f61aad318d9e06b38e5ea22880feffffff0223a7a784010000001976a914826f87806ddd4643730be99b41c98acc379e83db88ac80969800000000001976a914e395634b7684289285926d4c64db395b783720ec88ac6e750400",
		txid:    "bb47a9dd926de63e9d4f8dac58c3f63f4a079569ed3b80e932274a80f60e58b5",
		version: 1, outs: []string{"t1VmHTTwpEtwvojxodN2CSQqLYi1hzY3cAq", "t1ecxMXpphUTRQXGLXnVhJ6ucqD3DZipddg"},
		values: []uint64{6520547107, 10000000},
	},
}

func TestRealBlocksZcashBlockbookTxs(t *testing.T) {
	p := mainParser()
	txs := append([]blockbookTx{}, blockbookTxs...)
	txs = append(txs, joinSplitTx(t))
	for _, bt := range txs {
		raw, err := hex.DecodeString(bt.hex)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := p.ParseTx(raw)
		if err != nil {
			t.Fatalf("%s: %v", bt.txid, err)
		}
		if tx.Txid.String() != bt.txid || tx.Version != bt.version || len(tx.Vout) != len(bt.outs) {
			t.Fatalf("%s: decoded txid %s version %d, %d outputs", bt.txid, tx.Txid, tx.Version, len(tx.Vout))
		}
		for i, o := range tx.Vout {
			addrs, ok := p.OutputAddresses(o.Script)
			if !ok || len(addrs) != 1 || addrs[0] != bt.outs[i] || o.Value != bt.values[i] {
				t.Errorf("%s:%d = %v %d, recorded %s %d", bt.txid, i, addrs, o.Value, bt.outs[i], bt.values[i])
			}
		}
		if bt.joinSplit > 0 {
			sp, _ := tx.Specific.(*Specific)
			if sp == nil || sp.JoinSplits != bt.joinSplit || tx.ValueBalance != sp.JoinSplitVpubNewZat-sp.JoinSplitVpubOldZat {
				t.Errorf("%s: joinsplits %+v, value balance %d", bt.txid, sp, tx.ValueBalance)
			}
		}
	}
}

// joinSplitTx is Blockbook's v2 test tx e64aac0c..., whose one JoinSplit
// moves value out of the Sprout pool (kept in a file: it is 3 kB of hex).
func joinSplitTx(t *testing.T) blockbookTx {
	return blockbookTx{
		hex: btctest.ReadText(t, "blockbook-tx-e64aac0c.hex"), txid: "e64aac0c211ad210c90934f06b1cc932327329e41a9f70c6eb76f79ef798b7b8",
		version: 2, outs: []string{"t1Y4yL14ACHaAbjemkdpW7nYNHWnv1yQbDA"}, values: []uint64{18188266638}, joinSplit: 1,
	}
}

// TestRealBlocksZcash decodes real blocks of every tx era (zebra's test
// vectors, from zcashd's getblock): each block's hash recomputes into the
// next block's prev, every txid recomputes into the header's merkle root,
// and every output renders as a t-address of its network.
func TestRealBlocksZcash(t *testing.T) {
	for _, tc := range []struct {
		coin, name, next string
		version          int32 // a tx version the block must contain
		leads            []string
	}{
		{coin: "Zcash", name: "block-main-0-000-001", version: 1, leads: []string{"t1", "t3"}},
		{coin: "Zcash", name: "block-main-0-419-201", version: 4, leads: []string{"t1", "t3"}},
		{coin: "Zcash", name: "block-main-1-687-106", next: "block-main-1-687-107", version: 5, leads: []string{"t1", "t3"}},
		{coin: "Zcash", name: "block-main-1-687-107", version: 5, leads: []string{"t1", "t3"}},
		{coin: "Zcash Testnet", name: "block-test-1-842-421", version: 5, leads: []string{"tm", "t2"}},
	} {
		// The parser the registered network builds.
		n, ok := btc.NetworkFor(tc.coin)
		if !ok {
			t.Fatalf("%s is not registered", tc.coin)
		}
		up, err := n.NewParser(n.Params, nil)
		if err != nil {
			t.Fatal(err)
		}
		parser := up.(*Parser)
		blk, err := parser.ParseBlock(readBlock(t, tc.name))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := btctest.MerkleRoot(blk.Txs); got != blk.MerkleRoot {
			t.Errorf("%s: txids give merkle root %s, header has %s", tc.name, got, blk.MerkleRoot)
		}
		if tc.next != "" {
			next, err := parser.ParseBlock(readBlock(t, tc.next))
			if err != nil || next.Prev != blk.Hash {
				t.Errorf("%s: hash %s is not the next block's prev (%v)", tc.name, blk.Hash, err)
			}
		}
		seen := map[int32]int{}
		for i := range blk.Txs {
			tx := &blk.Txs[i]
			seen[tx.Version]++
			again, err := parser.ParseTx(tx.Raw)
			if err != nil || again.Txid != tx.Txid {
				t.Errorf("%s tx %d: ParseTx of its raw bytes: %v", tc.name, i, err)
			}
			for n, o := range tx.Vout {
				addrs, ok := parser.OutputAddresses(o.Script)
				if !ok || len(addrs) != 1 || !(strings.HasPrefix(addrs[0], tc.leads[0]) || strings.HasPrefix(addrs[0], tc.leads[1])) {
					t.Errorf("%s %s:%d: script %x renders as %v", tc.name, tx.Txid, n, o.Script, addrs)
				}
			}
		}
		if seen[tc.version] == 0 {
			t.Errorf("%s: no v%d tx among %v", tc.name, tc.version, seen)
		}
		t.Logf("%s: %s, tx versions %v", tc.name, blk.Hash, seen)
	}
}

// TestRealBlocksZcashRecordedAnswer compares mainnet block 1 with zebrad's
// recorded getblock verbosity 2 answer for it.
func TestRealBlocksZcashRecordedAnswer(t *testing.T) {
	var rec struct {
		Hash       string `json:"hash"`
		MerkleRoot string `json:"merkleroot"`
		Size       int    `json:"size"`
		Tx         []struct {
			Hex             string `json:"hex"`
			Txid            string `json:"txid"`
			Size            int    `json:"size"`
			ValueBalanceZat int64  `json:"valueBalanceZat"`
			Orchard         struct {
				ValueBalanceZat int64 `json:"valueBalanceZat"`
			} `json:"orchard"`
			Vout []struct {
				ValueZat     uint64 `json:"valueZat"`
				ScriptPubKey struct {
					Hex       string   `json:"hex"`
					Addresses []string `json:"addresses"`
				} `json:"scriptPubKey"`
			} `json:"vout"`
		} `json:"tx"`
	}
	btctest.ReadJSON(t, "zebrad-getblock-verbosity2-mainnet-1.json", &rec)
	p := mainParser()
	blk, err := p.ParseBlock(readBlock(t, "block-main-0-000-001"))
	if err != nil {
		t.Fatal(err)
	}
	if blk.Hash.String() != rec.Hash || blk.MerkleRoot.String() != rec.MerkleRoot || blk.Size != rec.Size || len(blk.Txs) != len(rec.Tx) {
		t.Fatalf("block %s (%d bytes), recorded %s (%d bytes)", blk.Hash, blk.Size, rec.Hash, rec.Size)
	}
	for i, rt := range rec.Tx {
		tx := &blk.Txs[i]
		if tx.Txid.String() != rt.Txid || hex.EncodeToString(tx.Raw) != rt.Hex || tx.Size != rt.Size ||
			tx.ValueBalance != rt.ValueBalanceZat+rt.Orchard.ValueBalanceZat {
			t.Errorf("tx %d: %s size %d vb %d, recorded %s", i, tx.Txid, tx.Size, tx.ValueBalance, rt.Txid)
		}
		for n, ro := range rt.Vout {
			o := tx.Vout[n]
			addrs, _ := p.OutputAddresses(o.Script)
			if hex.EncodeToString(o.Script) != ro.ScriptPubKey.Hex || o.Value != ro.ValueZat {
				t.Errorf("tx %d out %d: %x %d", i, n, o.Script, o.Value)
			}
			// zcashd lists addresses only for address scripts (not P2PK).
			if len(ro.ScriptPubKey.Addresses) > 0 && (len(addrs) != 1 || addrs[0] != ro.ScriptPubKey.Addresses[0]) {
				t.Errorf("tx %d out %d: %v, recorded %v", i, n, addrs, ro.ScriptPubKey.Addresses)
			}
		}
	}
}

// TestZIP244Personalizations guards the 16-byte personalization strings:
// a typo in one would silently change v5 txids (the real blocks catch it
// too, this names the culprit).
func TestZIP244Personalizations(t *testing.T) {
	for _, s := range []string{"ZTxIdHeadersHash", "ZTxIdTranspaHash", "ZTxIdPrevoutHash", "ZTxIdSequencHash",
		"ZTxIdOutputsHash", "ZTxIdSaplingHash", "ZTxIdSSpendsHash", "ZTxIdSSpendCHash", "ZTxIdSSpendNHash",
		"ZTxIdSOutputHash", "ZTxIdSOutC__Hash", "ZTxIdSOutM__Hash", "ZTxIdSOutN__Hash", "ZTxIdOrchardHash",
		"ZTxIdOrcActCHash", "ZTxIdOrcActMHash", "ZTxIdOrcActNHash", "ZTxIdSSpendNH_v6", orchardV6.bundle,
		ironwoodV6.bundle, ironwoodV6.compact, ironwoodV6.memos, ironwoodV6.noncompact} {
		if len(s) != 16 {
			t.Errorf("%q has %d bytes", s, len(s))
		}
	}
	_ = sha256.Size
}

// The backends the configs build declare the bchain.ShieldedPools
// capability for Zcash's networks only: the API leaves out txslight fees
// for them, and keeps Bitcoin's.
func TestShieldedPoolsCapability(t *testing.T) {
	for name, want := range map[string]bool{"Zcash": true, "Zcash Testnet": true, "Bitcoin": false, "Testnet": false} {
		cfg, err := bchain.ParseConfig([]byte(`{"coin_name":"` + name + `","rpc_url":"http://127.0.0.1:1"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := bchain.HasShieldedPools(b.Utxo); got != want {
			t.Errorf("%s: HasShieldedPools = %v, want %v", name, got, want)
		}
	}
}
