package scalegen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// ServeP2P accepts peer connections on ln until it is closed. Each peer
// gets the version handshake, pongs, and blocks for getdata (notfound for
// anything else).
func (s *Server) ServeP2P(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			_ = s.peer(c)
		}()
	}
}

var regtestNet = chaincfg.RegressionNetParams.Net

// peer runs one connection until it fails or closes.
func (s *Server) peer(c net.Conn) error {
	r := bufio.NewReaderSize(c, 1<<16)
	w := bufio.NewWriterSize(c, 1<<20)
	for {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Minute))
		_, msg, _, err := wire.ReadMessageWithEncodingN(r, wire.ProtocolVersion, regtestNet, wire.WitnessEncoding)
		if err != nil {
			var me *wire.MessageError
			if errors.As(err, &me) {
				continue // an unknown command: skip it, as nodes do
			}
			return err
		}
		switch m := msg.(type) {
		case *wire.MsgVersion:
			local := wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 0, wire.SFNodeNetwork|wire.SFNodeWitness)
			ver := wire.NewMsgVersion(local, &m.AddrMe, 1, s.Tip())
			ver.Services = wire.SFNodeNetwork | wire.SFNodeWitness
			ver.UserAgent = "/scalegen-blockserver:1.0/"
			if err := writeMsgs(w, ver, wire.NewMsgVerAck()); err != nil {
				return err
			}
		case *wire.MsgPing:
			if err := writeMsgs(w, wire.NewMsgPong(m.Nonce)); err != nil {
				return err
			}
		case *wire.MsgGetData:
			if err := s.getData(w, m); err != nil {
				return err
			}
		}
	}
}

func writeMsgs(w *bufio.Writer, msgs ...wire.Message) error {
	for _, m := range msgs {
		if _, err := wire.WriteMessageWithEncodingN(w, m, wire.ProtocolVersion, regtestNet, wire.WitnessEncoding); err != nil {
			return err
		}
	}
	return w.Flush()
}

// getData sends the requested blocks as raw block messages, in order, and
// one notfound for the rest.
func (s *Server) getData(w *bufio.Writer, m *wire.MsgGetData) error {
	missing := wire.NewMsgNotFound()
	for _, iv := range m.InvList {
		h, ok := s.byHash[iv.Hash]
		if !ok || (iv.Type != wire.InvTypeBlock && iv.Type != wire.InvTypeWitnessBlock) {
			_ = missing.AddInvVect(iv)
			continue
		}
		b, err := s.block(h)
		if err != nil {
			return err
		}
		if err := writeFrame(w, wire.CmdBlock, b); err != nil {
			return err
		}
	}
	if len(missing.InvList) > 0 {
		return writeMsgs(w, missing)
	}
	return w.Flush()
}

// writeFrame writes a message of already serialized payload (a block is
// sent as stored, not decoded and encoded again).
func writeFrame(w io.Writer, cmd string, payload []byte) error {
	if len(payload) > wire.MaxMessagePayload {
		return fmt.Errorf("%s payload of %d bytes", cmd, len(payload))
	}
	var hdr [wire.MessageHeaderSize]byte
	binary.LittleEndian.PutUint32(hdr[0:4], uint32(regtestNet))
	copy(hdr[4:4+wire.CommandSize], cmd)
	binary.LittleEndian.PutUint32(hdr[16:20], uint32(len(payload)))
	copy(hdr[20:24], chainhash.DoubleHashB(payload)[:4])
	_, err := io.Copy(w, io.MultiReader(bytes.NewReader(hdr[:]), bytes.NewReader(payload)))
	return err
}
