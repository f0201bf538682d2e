package btc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// p2pBlocks downloads blocks over the node's peer-to-peer port: a getdata
// answered by a binary block message. This spares the node hex-encoding
// megabytes into JSON and us decoding them, which dominates the cost of an
// initial sync over RPC. It is used only for blocks; failures fall back to
// RPC. Idle connections are kept in a small pool, one per concurrent
// request (peers answer getdata in order, one block at a time).
type p2pBlocks struct {
	addr   string
	net    wire.BitcoinNet
	opts   P2POptions
	log    *slog.Logger
	idle   chan *peerConn
	failed sync.Once // log the first fallback only
}

const (
	p2pDialTimeout    = 10 * time.Second
	p2pRequestTimeout = 60 * time.Second
	p2pMaxIdle        = 8
)

func newP2PBlocks(addr string, net wire.BitcoinNet, opts P2POptions, log *slog.Logger) *p2pBlocks {
	return &p2pBlocks{addr: addr, net: net, opts: opts, log: log, idle: make(chan *peerConn, p2pMaxIdle)}
}

// rawBlock returns the serialized block with hash from a peer connection.
func (p *p2pBlocks) rawBlock(ctx context.Context, hash bchain.Hash) ([]byte, error) {
	var c *peerConn
	select {
	case c = <-p.idle:
	default:
		var err error
		if c, err = dialPeer(ctx, p.addr, p.net, p.opts); err != nil {
			return nil, err
		}
	}
	raw, err := c.getBlock(ctx, internalHash(hash))
	if err != nil {
		c.close()
		return nil, err
	}
	select {
	case p.idle <- c:
	default:
		c.close()
	}
	return raw, nil
}

func (p *p2pBlocks) close() {
	for {
		select {
		case c := <-p.idle:
			c.close()
		default:
			return
		}
	}
}

// peerConn is one connection to the node's P2P port after the handshake.
type peerConn struct {
	conn net.Conn
	r    *bufio.Reader
	net  wire.BitcoinNet
	opts P2POptions
	// startHeight is the best height the peer announced in its version
	// message (auto-detection compares it with the RPC tip).
	startHeight int32
}

// dialPeer connects and performs the version/verack handshake.
func dialPeer(ctx context.Context, addr string, btcnet wire.BitcoinNet, opts P2POptions) (*peerConn, error) {
	d := net.Dialer{Timeout: p2pDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("p2p dial %s: %w", addr, err)
	}
	c := &peerConn{conn: conn, r: bufio.NewReaderSize(conn, 1<<20), net: btcnet, opts: opts}
	if err := c.handshake(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("p2p handshake with %s: %w", addr, err)
	}
	return c, nil
}

func (c *peerConn) close() { c.conn.Close() }

// clearDeadline lifts a deadline set for one exchange. It fails only on a
// closed connection, which the next read or write reports anyway.
func (c *peerConn) clearDeadline() { _ = c.conn.SetDeadline(time.Time{}) }

func (c *peerConn) handshake() error {
	_ = c.conn.SetDeadline(time.Now().Add(p2pDialTimeout))
	defer c.clearDeadline()
	local, _ := c.conn.LocalAddr().(*net.TCPAddr)
	remote, _ := c.conn.RemoteAddr().(*net.TCPAddr)
	if local == nil || remote == nil {
		return errors.New("not a TCP connection")
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	// We serve nothing (services 0) and want no transaction relay.
	ver := wire.NewMsgVersion(wire.NewNetAddressIPPort(local.IP, uint16(local.Port), 0),
		wire.NewNetAddressIPPort(remote.IP, uint16(remote.Port), wire.SFNodeNetwork|wire.SFNodeWitness),
		binary.LittleEndian.Uint64(nonce[:]), 0)
	if c.opts.ProtocolVersion != 0 {
		ver.ProtocolVersion = int32(c.opts.ProtocolVersion)
	}
	ver.UserAgent = "/blockbook:" + strconv.Itoa(int(wire.ProtocolVersion)) + "/"
	ver.DisableRelayTx = true
	if err := c.write(ver); err != nil {
		return err
	}
	gotVersion, gotVerAck := false, false
	for !gotVersion || !gotVerAck {
		cmd, payload, err := c.readFrame()
		if err != nil {
			return err
		}
		switch cmd {
		case wire.CmdVersion:
			gotVersion = true
			// An undecodable version (some coin's own fields) only
			// leaves the height unknown: explicit p2p_address needs none.
			var v wire.MsgVersion
			c.startHeight = -1
			if v.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.BaseEncoding) == nil { // it wants a *bytes.Buffer
				c.startHeight = v.LastBlock
			}
			if err := c.write(wire.NewMsgVerAck()); err != nil {
				return err
			}
		case wire.CmdVerAck:
			gotVerAck = true
		case wire.CmdPing:
			if err := c.pong(payload); err != nil {
				return err
			}
		}
	}
	return nil
}

// getBlock requests one block and waits for it, answering pings meanwhile.
func (c *peerConn) getBlock(ctx context.Context, hash chainhash.Hash) ([]byte, error) {
	deadline := time.Now().Add(p2pRequestTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.conn.SetDeadline(deadline)
	defer c.clearDeadline()
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Now()) })
	defer stop()

	req := wire.NewMsgGetData()
	inv := wire.InvTypeWitnessBlock
	switch {
	case c.opts.BlockInvType != 0:
		inv = c.opts.BlockInvType
	case c.opts.NoWitness:
		inv = wire.InvTypeBlock
	}
	if err := req.AddInvVect(wire.NewInvVect(inv, &hash)); err != nil {
		return nil, err
	}
	if err := c.write(req); err != nil {
		return nil, err
	}
	for {
		cmd, payload, err := c.readFrame()
		if err != nil {
			return nil, err
		}
		switch cmd {
		case wire.CmdBlock:
			if len(payload) < wire.MaxBlockHeaderPayload {
				return nil, errors.New("p2p: malformed block message")
			}
			if c.blockHash(payload[:wire.MaxBlockHeaderPayload]) == hash {
				return payload, nil
			}
		case wire.CmdNotFound:
			return nil, fmt.Errorf("%w: the peer does not serve block %s", bchain.ErrBlockNotFound, displayHash(hash))
		case wire.CmdPing:
			if err := c.pong(payload); err != nil {
				return nil, err
			}
		}
	}
}

// blockHash is the id of the block whose 80-byte header is given.
func (c *peerConn) blockHash(header []byte) chainhash.Hash {
	if c.opts.BlockHash != nil {
		return c.opts.BlockHash(header)
	}
	return chainhash.DoubleHashH(header)
}

func (c *peerConn) pong(pingPayload []byte) error {
	var ping wire.MsgPing
	if err := ping.BtcDecode(bytes.NewReader(pingPayload), wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
		return err
	}
	return c.write(wire.NewMsgPong(ping.Nonce))
}

func (c *peerConn) write(msg wire.Message) error {
	if c.opts.Checksum == nil {
		_, err := wire.WriteMessageWithEncodingN(c.conn, msg, wire.ProtocolVersion, c.net, wire.WitnessEncoding)
		return err
	}
	// The frame of a coin with its own checksum: magic, command, length,
	// checksum, payload.
	var payload bytes.Buffer
	if err := msg.BtcEncode(&payload, wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
		return err
	}
	frame := make([]byte, wire.MessageHeaderSize, wire.MessageHeaderSize+payload.Len())
	binary.LittleEndian.PutUint32(frame[0:4], uint32(c.net))
	copy(frame[4:4+wire.CommandSize], msg.Command())
	binary.LittleEndian.PutUint32(frame[16:20], uint32(payload.Len()))
	sum := c.opts.Checksum(payload.Bytes())
	copy(frame[20:24], sum[:])
	_, err := c.conn.Write(append(frame, payload.Bytes()...))
	return err
}

// checksum is the frame checksum of a payload.
func (c *peerConn) checksum(payload []byte) []byte {
	if c.opts.Checksum != nil {
		sum := c.opts.Checksum(payload)
		return sum[:]
	}
	return chainhash.DoubleHashB(payload)[:4]
}

// readFrame reads one message frame: a 24-byte header (network magic,
// command, payload length, checksum) and the payload, whose checksum it
// verifies. Payloads are returned raw, so that a block goes to the block
// parser without being decoded twice.
func (c *peerConn) readFrame() (string, []byte, error) {
	var hdr [wire.MessageHeaderSize]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return "", nil, err
	}
	if wire.BitcoinNet(binary.LittleEndian.Uint32(hdr[0:4])) != c.net {
		return "", nil, errors.New("p2p: message for another network")
	}
	cmd := string(bytes.TrimRight(hdr[4:4+wire.CommandSize], "\x00"))
	n := binary.LittleEndian.Uint32(hdr[16:20])
	if n > wire.MaxMessagePayload {
		return "", nil, fmt.Errorf("p2p: %s message of %d bytes", cmd, n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(c.r, payload); err != nil {
		return "", nil, err
	}
	if !bytes.Equal(c.checksum(payload), hdr[20:24]) {
		return "", nil, fmt.Errorf("p2p: bad checksum of %s message", cmd)
	}
	return cmd, payload, nil
}
