package api

import (
	"context"
	"errors"

	"github.com/openexplorer/blockbook/bchain"
)

// ErrTooManyTxs is the cause of a history that is over the caller's limit.
var ErrTooManyTxs = errors.New("history too large")

// ScriptQueries answers, by output script, what the Electrum and Esplora
// fronts need beyond Blockbook's own queries: script hashes, per-script
// history in chain order, balances with Esplora's funded/spent counts,
// UTXOs, raw block headers and tx positions in blocks. Bitcoin-type
// services offer it; the fronts are built on it (and on Service) only.
type ScriptQueries interface {
	// ScriptByHash finds the output script whose sha256 is sh, in the byte
	// order sha256 produces (Electrum shows it reversed, like a txid).
	// found is false for a script no indexed tx has paid or spent.
	// The script found is the one the index files outputs under: a P2PK
	// output is filed under its key's P2PKH script, so the P2PK script's
	// own hash is not found (docs/schema.md, scriptHashes).
	ScriptByHash(ctx context.Context, sh [32]byte) (script []byte, found bool, err error)
	// ScriptHistory lists the txs touching script: the confirmed ones in
	// chain order (height, then position in the block), then the pending
	// ones in mempool order. It fails with ErrTooManyTxs (wrapped) when
	// there are more than limit txs, before reading them all (a negative
	// limit is none). The error is also a user error (*Error).
	ScriptHistory(ctx context.Context, script []byte, limit int) ([]ScriptTx, error)
	// ScriptBalance sums what the confirmed and the pending txs pay to and
	// spend from script.
	ScriptBalance(ctx context.Context, script []byte) (*ScriptBalance, error)
	// ScriptUtxos lists the unspent outputs of script, the confirmed ones
	// in chain order then the pending ones, without outputs that a pending
	// tx spends.
	ScriptUtxos(ctx context.Context, script []byte) ([]ScriptUtxo, error)
	// BlockHeaders returns the serialized headers of up to count blocks of
	// the active chain from start (fewer at the tip, none past it).
	BlockHeaders(ctx context.Context, start uint32, count int) ([][]byte, error)
	// BlockTxids lists the txids of the block at height, in block order.
	// A height past the tip is a user error (*Error).
	BlockTxids(ctx context.Context, height uint32) ([]bchain.Hash, error)
	// TxPosition gives the height of a confirmed tx and its index in the
	// block; confirmed is false for a pending or unknown tx.
	TxPosition(ctx context.Context, txid bchain.Hash) (height uint32, pos int, confirmed bool, err error)
}

// ScriptTx is one tx of a script's history.
type ScriptTx struct {
	Txid bchain.Hash
	// Height of the block; 0 for a pending tx.
	Height uint32
	// Pos is the tx's index in its block; -1 for a pending tx.
	Pos int
	// Fee in satoshis of a pending tx (Electrum's mempool entries show it).
	Fee int64
	// UnconfirmedInputs marks a pending tx that spends an output of
	// another pending tx (Electrum's height -1).
	UnconfirmedInputs bool
	// Time the pending tx entered the mempool (unix seconds); 0 if confirmed.
	FirstSeen int64
}

// ScriptStats are Esplora's chain_stats / mempool_stats of a script.
type ScriptStats struct {
	FundedTxoCount int64
	FundedTxoSum   int64
	SpentTxoCount  int64
	SpentTxoSum    int64
	TxCount        int64
}

// ScriptBalance is a script's balance, confirmed and pending apart.
type ScriptBalance struct {
	Chain, Mempool ScriptStats
}

// Confirmed is the balance of the confirmed txs (Electrum's confirmed).
func (b *ScriptBalance) Confirmed() int64 { return b.Chain.FundedTxoSum - b.Chain.SpentTxoSum }

// Unconfirmed is what the pending txs add or take (Electrum's
// unconfirmed; negative when they spend more than they pay).
func (b *ScriptBalance) Unconfirmed() int64 { return b.Mempool.FundedTxoSum - b.Mempool.SpentTxoSum }

// ScriptUtxo is one unspent output of a script.
type ScriptUtxo struct {
	Txid bchain.Hash
	Vout uint32
	// Height of the block; 0 for a pending output.
	Height uint32
	Value  int64
}
