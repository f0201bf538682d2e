package scalegen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
)

// On disk: blkNNNNN.dat files as Bitcoin Core writes them (network magic,
// length, block) and index.bin, one 48-byte record per height: block hash
// (internal byte order), file number, offset of the block bytes, length.
const (
	indexFile   = "index.bin"
	statsFile   = "stats.json"
	recordSize  = 48
	maxBlkBytes = 128 << 20
	regtestBits = 0x207fffff
)

// record locates one block.
type record struct {
	hash   [32]byte
	file   uint32
	offset uint64
	size   uint32
}

func (r record) marshal() []byte {
	b := make([]byte, 0, recordSize)
	b = append(b, r.hash[:]...)
	b = binary.LittleEndian.AppendUint32(b, r.file)
	b = binary.LittleEndian.AppendUint64(b, r.offset)
	return binary.LittleEndian.AppendUint32(b, r.size)
}

func unmarshalRecord(b []byte) record {
	var r record
	copy(r.hash[:], b[:32])
	r.file = binary.LittleEndian.Uint32(b[32:])
	r.offset = binary.LittleEndian.Uint64(b[36:])
	r.size = binary.LittleEndian.Uint32(b[44:])
	return r
}

// blkWriter appends blocks to blk files and their records to the index.
type blkWriter struct {
	dir    string
	file   uint32
	f      *os.File
	w      *bufio.Writer
	off    uint64
	index  *bufio.Writer
	indexF *os.File
}

func newBlkWriter(dir string) (*blkWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	idx, err := os.Create(filepath.Join(dir, indexFile))
	if err != nil {
		return nil, err
	}
	bw := &blkWriter{dir: dir, indexF: idx, index: bufio.NewWriterSize(idx, 1<<16)}
	return bw, bw.open(0)
}

func blkName(dir string, n uint32) string { return filepath.Join(dir, fmt.Sprintf("blk%05d.dat", n)) }

func (bw *blkWriter) open(n uint32) error {
	f, err := os.Create(blkName(bw.dir, n))
	if err != nil {
		return err
	}
	bw.file, bw.f, bw.w, bw.off = n, f, bufio.NewWriterSize(f, 4<<20), 0
	return nil
}

func (bw *blkWriter) closeBlk() error {
	if err := bw.w.Flush(); err != nil {
		return err
	}
	return bw.f.Close()
}

func (bw *blkWriter) write(hash [32]byte, block []byte) error {
	if bw.off > 0 && bw.off+uint64(len(block))+8 > maxBlkBytes {
		if err := bw.closeBlk(); err != nil {
			return err
		}
		if err := bw.open(bw.file + 1); err != nil {
			return err
		}
	}
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(chaincfg.RegressionNetParams.Net))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(block)))
	if _, err := bw.w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := bw.w.Write(block); err != nil {
		return err
	}
	rec := record{hash: hash, file: bw.file, offset: bw.off + 8, size: uint32(len(block))}
	bw.off += 8 + uint64(len(block))
	_, err := bw.index.Write(rec.marshal())
	return err
}

func (bw *blkWriter) close() error {
	if err := bw.closeBlk(); err != nil {
		return err
	}
	if err := bw.index.Flush(); err != nil {
		return err
	}
	return bw.indexF.Close()
}

// Generate writes a chain shaped by o into dir and returns its statistics
// (also written to dir/stats.json). progress, when set, is called after
// every block.
func Generate(dir string, o Options, progress func(Stats)) (Stats, error) {
	s := newState(o)
	bw, err := newBlkWriter(dir)
	if err != nil {
		return Stats{}, err
	}
	var genesis bytes.Buffer
	if err := chaincfg.RegressionNetParams.GenesisBlock.Serialize(&genesis); err != nil {
		return Stats{}, err
	}
	prev := *chaincfg.RegressionNetParams.GenesisHash
	if err := bw.write(prev, genesis.Bytes()); err != nil {
		return Stats{}, err
	}
	s.stats.Blocks, s.stats.Txs = 1, 1
	var bb blockBuilder
	for h := 1; s.stats.Txs < o.Txs; h++ {
		s.height = h
		s.era = min(1, float64(h)/float64(s.blocks))
		hash, block := bb.build(s, prev, h, min(s.blockTxs(h), o.Txs-s.stats.Txs))
		if err := bw.write(hash, block); err != nil {
			return Stats{}, fmt.Errorf("block %d: %w", h, err)
		}
		prev = hash
		s.stats.Blocks++
		s.stats.Bytes += int64(len(block))
		if progress != nil {
			progress(s.stats)
		}
	}
	if err := bw.close(); err != nil {
		return Stats{}, err
	}
	s.stats.Account = s.accountStats()
	s.stats.Addresses = len(s.addrKind) + s.stats.Account.Addresses
	s.stats.UTXOs = len(s.pool) + len(s.acct.utxos)
	for i, w := range s.whales {
		s.stats.UTXOs += len(w)
		for _, u := range w {
			s.stats.WhaleBalance[i] += u.value
		}
	}
	data, _ := json.MarshalIndent(s.stats, "", "  ")
	return s.stats, os.WriteFile(filepath.Join(dir, statsFile), data, 0o644)
}

// blockBuilder assembles blocks, reusing its buffers.
type blockBuilder struct {
	tb   txBuilder
	txs  []byte
	ids  [][32]byte
	fees int64
}

// build makes block h with n txs (fewer when the unspent set runs dry).
func (bb *blockBuilder) build(s *state, prev [32]byte, h, n int) ([32]byte, []byte) {
	bb.txs, bb.ids, bb.fees = bb.txs[:0], bb.ids[:0], 0
	count := 1
	body := make([]byte, 0, 1<<20)
	for i := 1; i < n; i++ {
		raw, txid, ok := s.nextTx(&bb.tb, &bb.fees)
		if !ok {
			break
		}
		bb.ids = append(bb.ids, txid)
		body = append(body, raw...)
		count++
	}
	// The coinbase pays the subsidy (halving four times over the chain)
	// plus the fees to a miner's address; it goes first.
	addr, kind := s.payee()
	cbOut := []txOut{{addr: addr, kind: kind, value: (50e8 >> int(s.era*4)) + bb.fees}}
	cbRaw, cbID := bb.tb.build(nil, cbOut, h)
	cbRaw = append([]byte(nil), cbRaw...)
	s.addOutputs(cbID, cbOut)
	ids := append([][32]byte{cbID}, bb.ids...)
	s.stats.Txs += count

	hdr := make([]byte, 80, 80+9+len(cbRaw)+len(body))
	binary.LittleEndian.PutUint32(hdr[0:], 0x20000000)
	copy(hdr[4:], prev[:])
	root := merkleRoot(ids)
	copy(hdr[36:], root[:])
	t := chaincfg.RegressionNetParams.GenesisBlock.Header.Timestamp.Add(time.Duration(h) * 10 * time.Minute)
	binary.LittleEndian.PutUint32(hdr[68:], uint32(t.Unix()))
	binary.LittleEndian.PutUint32(hdr[72:], regtestBits)
	var hash [32]byte
	for nonce := uint32(0); ; nonce++ {
		binary.LittleEndian.PutUint32(hdr[76:], nonce)
		hash = dsha(hdr)
		if hash[31] < 0x7f { // below the regtest target 0x7fffff << 232
			break
		}
	}
	blk := appendVarInt(hdr, uint64(count))
	blk = append(blk, cbRaw...)
	return hash, append(blk, body...)
}
