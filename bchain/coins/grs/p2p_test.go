package grs

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// grsPeer is a scripted Groestlcoin peer: Groestlcoin Core's P2P framing
// (magic, command, length, double-Grøstl checksum) over TCP, serving one
// block. No Groestlcoin node can run in the test suite; the frames are the
// ones Groestlcoin Core sends and checks (net.cpp: HashMessage).
func grsPeer(t *testing.T, ln net.Listener, magic wire.BitcoinNet, block []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		send := func(cmd string, payload []byte) error {
			frame := make([]byte, 24, 24+len(payload))
			binary.LittleEndian.PutUint32(frame, uint32(magic))
			copy(frame[4:16], cmd)
			binary.LittleEndian.PutUint32(frame[16:], uint32(len(payload)))
			sum := checksum4(payload)
			copy(frame[20:], sum[:])
			_, err := conn.Write(append(frame[:24:24], payload...))
			return err
		}
		recv := func() (string, []byte, error) {
			hdr := make([]byte, 24)
			if _, err := io.ReadFull(conn, hdr); err != nil {
				return "", nil, err
			}
			payload := make([]byte, binary.LittleEndian.Uint32(hdr[16:]))
			if _, err := io.ReadFull(conn, payload); err != nil {
				return "", nil, err
			}
			if sum := checksum4(payload); !bytes.Equal(sum[:], hdr[20:24]) {
				return "", nil, errors.New("frame without Groestlcoin's checksum")
			}
			return string(bytes.TrimRight(hdr[4:16], "\x00")), payload, nil
		}
		var ver bytes.Buffer
		v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 1331, 0), wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 1331, 0), 1, 0)
		_ = v.BtcEncode(&ver, wire.ProtocolVersion, wire.BaseEncoding)
		for _, want := range []string{"version", "verack", "getdata"} {
			cmd, _, err := recv()
			if err != nil || cmd != want {
				done <- errors.Join(err, errors.New("peer got "+cmd+", want "+want))
				return
			}
			if cmd == "version" {
				if err := errors.Join(send("version", ver.Bytes()), send("verack", nil)); err != nil {
					done <- err
					return
				}
			}
		}
		done <- send("block", block)
	}()
	return done
}

// Blocks downloaded from a Groestlcoin peer (p2p_address): frames carry
// double-Grøstl checksums both ways and the block is matched by its Grøstl
// id. The node's RPC port is closed, so only the P2P path can answer.
func TestP2PGroestlcoinFraming(t *testing.T) {
	var rec struct{ Hash, Block string }
	btctest.ReadJSON(t, "electrumx_mainnet_2000000.json", &rec)
	raw, _ := hex.DecodeString(rec.Block)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := grsPeer(t, ln, MainnetMagic, raw)
	b, err := btctest.Backend(t, map[string]any{"coin_name": "Groestlcoin", "rpc_url": "http://127.0.0.1:1", "p2p_address": ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := bchain.ParseHash(rec.Hash)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	blk, err := b.Chain.Block(ctx, hash, 2000000)
	if err != nil {
		t.Fatalf("block over P2P: %v (peer: %v)", err, <-done)
	}
	if blk.Hash != hash || len(blk.Txs) != 2 {
		t.Errorf("got block %s with %d txs", blk.Hash, len(blk.Txs))
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
}
