package doge

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

func backend(t *testing.T, name, rpcURL, p2p string) *bchain.Backend {
	t.Helper()
	b, err := btctest.Backend(t, map[string]any{"coin_name": name, "rpc_url": rpcURL, "rpc_user": "u", "rpc_pass": "p", "rpc_timeout": 5, "p2p_address": p2p})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dogecoind stands in for Dogecoin Core 1.14's JSON-RPC (no dogecoind can
// run in the test suite): it answers the calls the fee estimator makes with
// the shapes dogecoind gives (estimate, an estimatefee result or nil for
// "Method not found"), and refuses everything else as dogecoind refuses
// unknown methods.
type dogecoind struct {
	mu       sync.Mutex
	estimate any
	relayFee float64
}

func (d *dogecoind) answer(method string, _ []any) (any, *btctest.RPCError) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case method == "estimatefee" && d.estimate != nil:
		return d.estimate, nil
	case method == "getnetworkinfo":
		return map[string]any{"version": 1140700, "subversion": "/Shibetoshi:1.14.7/", "relayfee": d.relayFee}, nil
	}
	return nil, btctest.MethodNotFound
}

// Fee estimates: estimatefee's answer when it has one, else the relay fee,
// never below Dogecoin's recommended 0.01 DOGE/kB.
func TestEstimateFeeDogecoin(t *testing.T) {
	d := &dogecoind{relayFee: 0.001}
	node := btctest.NewNode(t, d.answer)
	b := backend(t, "Dogecoin", node.URL, "")
	cases := []struct {
		estimate any
		relay    float64
		want     int64
	}{
		{json.Number("0.02"), 0.001, 2_000_000},
		{json.Number("0.005"), 0.001, MinFeeRate}, // below the floor
		{json.Number("-1"), 0.001, MinFeeRate},    // no estimate, low relay fee
		{json.Number("-1"), 0.05, 5_000_000},      // no estimate, node's relay fee
		{nil, 0.001, MinFeeRate},                  // estimatefee refused
		{json.Number("1.23456789"), 0.001, 123_456_789},
	}
	for _, c := range cases {
		d.mu.Lock()
		d.estimate, d.relayFee = c.estimate, c.relay
		d.mu.Unlock()
		got, err := b.Fees.EstimateFee(context.Background(), 6, true)
		if err != nil || got != c.want {
			t.Errorf("estimatefee %v relay %v: %d, %v; want %d", c.estimate, c.relay, got, err, c.want)
		}
		if calls := node.Calls(); len(calls) == 0 || calls[0] != "estimatefee" {
			t.Errorf("calls %v", calls)
		}
	}
	// A node that does not answer is an error, not a made-up fee.
	node.Close()
	if _, err := b.Fees.EstimateFee(context.Background(), 6, true); err == nil {
		t.Error("fee estimate without a node")
	}
}

// A peer on Dogecoin's P2P port serves merge-mined blocks like any other:
// the block message carries the 80-byte header, the AuxPoW data and the
// txs. The peer here speaks the real framing (Dogecoin's magic, checksums,
// version/verack, getdata) and serves the real block 371337.
func TestP2PAuxPoWBlock(t *testing.T) {
	rb := loadBlocks(t)
	var raw []byte
	for _, b := range rb {
		if b.Hash != "" {
			raw, _ = hex.DecodeString(b.Block)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var gotInv atomic.Uint32
	go servePeer(t, ln, raw, &gotInv)
	// RPC points nowhere: the block must come over P2P.
	b := backend(t, "Dogecoin", "http://127.0.0.1:1", ln.Addr().String())
	hash, _ := bchain.ParseHash("60323982f9c5ff1b5a954eac9dc1269352835f47c2c5222691d80f0d50dcf053")
	blk, err := b.Chain.Block(context.Background(), hash, 371337)
	if err != nil {
		t.Fatal(err)
	}
	if blk.Hash != hash || blk.Height != 371337 || len(blk.Txs) != 6 || blk.Size != len(raw) {
		t.Fatalf("block %s at %d with %d txs", blk.Hash, blk.Height, len(blk.Txs))
	}
	if wire.InvType(gotInv.Load()) != wire.InvTypeBlock {
		t.Errorf("getdata asked for inventory type %v, want a plain block (no SegWit)", wire.InvType(gotInv.Load()))
	}
}

func servePeer(t *testing.T, ln net.Listener, block []byte, gotInv *atomic.Uint32) {
	conn, err := ln.Accept()
	if err != nil {
		return
	}
	defer conn.Close()
	const pver = 70015
	for {
		_, msg, _, err := wire.ReadMessageWithEncodingN(conn, pver, MainnetMagic, wire.BaseEncoding)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Log("peer:", err)
			}
			return
		}
		switch m := msg.(type) {
		case *wire.MsgVersion:
			me := wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 22556, wire.SFNodeNetwork)
			v := wire.NewMsgVersion(me, me, 1, 0)
			v.ProtocolVersion = pver
			v.UserAgent = "/Shibetoshi:1.14.7/"
			write(t, conn, v)
			write(t, conn, wire.NewMsgVerAck())
		case *wire.MsgGetData:
			gotInv.Store(uint32(m.InvList[0].Type))
			writeRaw(t, conn, "block", block)
		}
	}
}

func write(t *testing.T, conn net.Conn, msg wire.Message) {
	if _, err := wire.WriteMessageWithEncodingN(conn, msg, 70015, MainnetMagic, wire.BaseEncoding); err != nil {
		t.Log("peer:", err)
	}
}

// writeRaw frames a payload as is: btcd's MsgBlock cannot encode AuxPoW.
func writeRaw(t *testing.T, conn net.Conn, cmd string, payload []byte) {
	frame := make([]byte, wire.MessageHeaderSize, wire.MessageHeaderSize+len(payload))
	binary.LittleEndian.PutUint32(frame[0:4], uint32(MainnetMagic))
	copy(frame[4:16], cmd)
	binary.LittleEndian.PutUint32(frame[16:20], uint32(len(payload)))
	sum := chainhash.DoubleHashB(payload)
	copy(frame[20:24], sum[:4])
	if _, err := conn.Write(append(frame, payload...)); err != nil {
		t.Log("peer:", err)
	}
}

// Accounts: a BIP44 key with Dogecoin's version (dgub, Blockbook's
// xpub_magic 49990397) parses and derives D... addresses under m/44'/3'.
func TestXpubDogecoin(t *testing.T) {
	b := backend(t, "Dogecoin", "http://127.0.0.1:1", "")
	// Neuter looks the private key version up in btcd's registry.
	if err := chaincfg.RegisterHDKeyID(MainNetParams.HDPublicKeyID[:], MainNetParams.HDPrivateKeyID[:]); err != nil {
		t.Fatal(err)
	}
	master, err := hdkeychain.NewMaster(bytes.Repeat([]byte{7}, 32), MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	acct := master
	for _, i := range []uint32{44, 3, 0} {
		if acct, err = acct.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := acct.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	s := pub.String()
	if !strings.HasPrefix(s, "dgub") {
		t.Fatalf("%s", s)
	}
	d, err := b.Xpub.ParseXpub(s)
	if err != nil || d.ScriptType != bchain.XpubP2PKH || d.BasePath != "m/44'/3'/0'" {
		t.Fatalf("%+v %v", d, err)
	}
	descs, err := b.Xpub.DeriveAddrDescs(d, 0, 0, 2)
	if err != nil || len(descs) != 2 {
		t.Fatal(err)
	}
	want, _ := acct.Derive(0)
	want, _ = want.Derive(0)
	wantAddr, _ := want.Address(MainNetParams)
	addrs, _, err := b.Addresses.AddressesFromAddrDesc(descs[0])
	if err != nil || len(addrs) != 1 || addrs[0] != wantAddr.EncodeAddress() || addrs[0][0] != 'D' {
		t.Errorf("first receive address %v, want %s (%v)", addrs, wantAddr, err)
	}
	// Dogecoin has no SegWit: SegWit account forms are refused, not derived.
	for _, desc := range []string{"wpkh(" + s + "/<0;1>/*)", "sh(wpkh(" + s + "/<0;1>/*))", "tr(" + s + "/<0;1>/*)"} {
		if _, err := b.Xpub.ParseXpub(desc); !errors.Is(err, bchain.ErrInvalidXpub) {
			t.Errorf("%.12s...: err %v, want ErrInvalidXpub", desc, err)
		}
	}
}
