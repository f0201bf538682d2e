package api

import (
	"context"

	"github.com/openexplorer/blockbook/bchain"
)

// EsploraQueries answers what the Esplora REST front needs beyond Service
// and ScriptQueries: txs with the output each input spends (Esplora's
// prevouts), the spends of outputs, blocks with their header fields and
// weight, and the mempool's backlog. Bitcoin-type services offer it. The
// front renders Esplora's shapes from these records.
type EsploraQueries interface {
	// EsploraTx loads a confirmed or pending tx with its prevouts and
	// status; nil (no error) when neither the index, the mempool nor the
	// node knows it.
	EsploraTx(ctx context.Context, txid bchain.Hash) (*EsploraTx, error)
	// EsploraSpends tells, for each of the first n outputs of txid, the
	// input that spends it (confirmed or pending), if any.
	EsploraSpends(ctx context.Context, txid bchain.Hash, n int) ([]EsploraSpend, error)
	// EsploraTip is the index's best block; ok is false before the first.
	EsploraTip(ctx context.Context) (height uint32, hash bchain.Hash, ok bool, err error)
	// EsploraBlockHeight finds a block of the active chain by hash; found
	// is false for an unknown or stale block.
	EsploraBlockHeight(ctx context.Context, hash bchain.Hash) (height uint32, found bool, err error)
	// EsploraBlock returns the active chain's block at height, with its
	// txids; nil above the tip.
	EsploraBlock(ctx context.Context, height uint32) (*EsploraBlock, error)
	// EsploraBlockRefs places blocks of the active chain by height (from
	// the index alone); heights above the tip are left out.
	EsploraBlockRefs(ctx context.Context, heights []uint32) (map[uint32]EsploraBlockRef, error)
	// EsploraRawBlock returns the serialized block at height.
	EsploraRawBlock(ctx context.Context, height uint32) ([]byte, error)
	// EsploraMempool lists the pending txs, newest first.
	EsploraMempool(ctx context.Context) ([]EsploraMempoolTx, error)
}

var _ EsploraQueries = (*UtxoService)(nil)

// EsploraBlockRef places a confirmed tx: its block's height, hash and time.
type EsploraBlockRef struct {
	Height uint32
	Hash   bchain.Hash
	Time   int64
}

// EsploraTxo is an output as Esplora shows it: its script and value.
type EsploraTxo struct {
	Script []byte
	Value  uint64
}

// EsploraTx is a decoded tx with its prevouts and confirmation status.
type EsploraTx struct {
	Tx *bchain.Tx
	// Prevouts has one entry per input; nil for the coinbase input and for
	// an output no one can resolve (a pending tx's missing parent).
	Prevouts []*EsploraTxo
	// Block is set for a confirmed tx.
	Block *EsploraBlockRef
	// Weight is the tx's weight units (BIP141).
	Weight int
}

// Fee is the tx's fee in satoshis: 0 for a coinbase, and what the resolved
// prevouts pay beyond the outputs otherwise (as Esplora, an unresolved
// prevout counts nothing).
func (t *EsploraTx) Fee() uint64 {
	if t.Tx.IsCoinbase() {
		return 0
	}
	var in, out uint64
	for _, p := range t.Prevouts {
		if p != nil {
			in += p.Value
		}
	}
	for _, o := range t.Tx.Vout {
		out += o.Value
	}
	if in < out {
		return 0
	}
	return in - out
}

// EsploraSpend is the input that spends an output, if any.
type EsploraSpend struct {
	Spent bool
	Txid  bchain.Hash
	Vin   uint32
	// Block is set when the spending tx is confirmed.
	Block *EsploraBlockRef
}

// EsploraBlock is a block of the active chain.
type EsploraBlock struct {
	Height     uint32
	Hash, Prev bchain.Hash
	Version    int32
	MerkleRoot bchain.Hash
	Time       int64
	Bits       uint32
	Nonce      uint32
	Size       int
	Weight     int
	// MedianTime is the median of the times of the block and the ten
	// before it (BIP113).
	MedianTime int64
	Txids      []bchain.Hash
	// Next is the next block of the active chain; HasNext is false at the tip.
	Next    bchain.Hash
	HasNext bool
}

// EsploraMempoolTx is a pending tx as Esplora's mempool answers show it.
type EsploraMempoolTx struct {
	Txid bchain.Hash
	// Fee in satoshis; FeeKnown is false while a parent is unresolved.
	Fee      uint64
	FeeKnown bool
	VSize    int
	// Value is the sum of the outputs.
	Value     uint64
	FirstSeen int64
}
