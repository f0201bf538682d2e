package chaingen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/btcsuite/btcd/wire/v2"
)

// blockFileMagic starts a block file: "CHAINGEN" plus a format version.
var blockFileMagic = []byte("CHAINGEN\x01")

// maxBlockBytes bounds a record so a corrupt length cannot exhaust memory.
const maxBlockBytes = 32 << 20

// WriteBlocks writes blocks as a magic header followed by one record per
// block: a little-endian uint32 length and the block's wire serialisation
// (with witnesses).
func WriteBlocks(w io.Writer, blocks []*wire.MsgBlock) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(blockFileMagic); err != nil {
		return err
	}
	var buf bytes.Buffer
	var size [4]byte
	for i, b := range blocks {
		buf.Reset()
		if err := b.Serialize(&buf); err != nil {
			return fmt.Errorf("chaingen: serialize block %d: %w", i, err)
		}
		binary.LittleEndian.PutUint32(size[:], uint32(buf.Len()))
		if _, err := bw.Write(size[:]); err != nil {
			return err
		}
		if _, err := bw.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadBlocks reads a file written by WriteBlocks.
func ReadBlocks(r io.Reader) ([]*wire.MsgBlock, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	magic := make([]byte, len(blockFileMagic))
	if _, err := io.ReadFull(br, magic); err != nil || !bytes.Equal(magic, blockFileMagic) {
		return nil, errors.New("chaingen: not a chaingen block file")
	}
	var blocks []*wire.MsgBlock
	var size [4]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(br, size[:]); err != nil {
			if err == io.EOF {
				return blocks, nil
			}
			return nil, fmt.Errorf("chaingen: block %d: %w", len(blocks), err)
		}
		n := binary.LittleEndian.Uint32(size[:])
		if n > maxBlockBytes {
			return nil, fmt.Errorf("chaingen: block %d: record of %d bytes", len(blocks), n)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n] // Deserialize copies scripts, so the buffer can be reused
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("chaingen: block %d: %w", len(blocks), err)
		}
		b := new(wire.MsgBlock)
		if err := b.Deserialize(bytes.NewReader(buf)); err != nil {
			return nil, fmt.Errorf("chaingen: block %d: %w", len(blocks), err)
		}
		blocks = append(blocks, b)
	}
}

// WriteBlocksFile writes blocks to path through a temporary file renamed
// into place, so that an interrupted run never leaves a truncated file that
// a later run would take for a finished one.
func WriteBlocksFile(path string, blocks []*wire.MsgBlock) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("chaingen: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("chaingen: %w", err)
	}
	// Close counts: it can lose the file's last write.
	if err := errors.Join(WriteBlocks(f, blocks), f.Close()); err != nil {
		return fmt.Errorf("chaingen: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("chaingen: %w", err)
	}
	return nil
}

// ReadBlocksFile reads a file written by WriteBlocksFile or WriteBlocks.
func ReadBlocksFile(path string) ([]*wire.MsgBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("chaingen: %w", err)
	}
	blocks, err := ReadBlocks(f)
	_ = f.Close() // opened for reading: Close has nothing to lose
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return blocks, nil
}
