package chaingen

import (
	"fmt"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil/v2"
	"github.com/btcsuite/btcd/mining"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// blockVersion sets the BIP9 top bits; BIP34/65/66 (active from height 1
// on regtest) require version >= 4.
const blockVersion = 0x20000000

// coin is a chain-wide unspent output as the generator's UTXO view sees it.
type coin struct {
	value    int64
	height   int32
	coinbase bool
}

// AddBlock builds the next block from txs (placed after the coinbase, in the
// given order) and appends it to the chain. Every input must spend an
// existing unspent output or an output of an earlier tx in txs; coinbase
// outputs must be mature. The coinbase pays subsidy plus fees to the miner
// key and carries the witness commitment when any tx has witness data.
// Scripts and signatures are not verified here; the node does that on
// submission. On error the chain is unchanged.
func (g *Generator) AddBlock(txs ...*wire.MsgTx) (*wire.MsgBlock, error) {
	height := g.Height() + 1
	fees, err := g.checkTxs(txs, height)
	if err != nil {
		return nil, fmt.Errorf("chaingen: block %d: %w", height, err)
	}
	b, err := g.assemble(height, txs, fees)
	if err != nil {
		return nil, fmt.Errorf("chaingen: block %d: %w", height, err)
	}
	g.connect(b)
	return b, nil
}

// checkTxs validates txs against the UTXO view without changing it and
// returns their total fee.
func (g *Generator) checkTxs(txs []*wire.MsgTx, height int32) (int64, error) {
	spent := make(map[wire.OutPoint]bool)
	created := make(map[wire.OutPoint]int64)
	var fees int64
	for _, tx := range txs {
		txid := tx.TxHash()
		if len(tx.TxIn) == 0 || blockchain.IsCoinBaseTx(tx) {
			return 0, fmt.Errorf("tx %s: not a regular transaction", txid)
		}
		var in, out int64
		for _, ti := range tx.TxIn {
			op := ti.PreviousOutPoint
			if spent[op] {
				return 0, fmt.Errorf("tx %s: %v spent twice in block", txid, op)
			}
			if v, ok := created[op]; ok {
				in += v
			} else if c, ok := g.view[op]; ok {
				if c.coinbase && height-c.height < int32(g.params.CoinbaseMaturity) {
					return 0, fmt.Errorf("tx %s: spends immature coinbase %v", txid, op)
				}
				in += c.value
			} else {
				return 0, fmt.Errorf("tx %s: input %v missing or spent", txid, op)
			}
			spent[op] = true
		}
		for i, o := range tx.TxOut {
			out += o.Value
			created[wire.OutPoint{Hash: txid, Index: uint32(i)}] = o.Value
		}
		if in < out {
			return 0, fmt.Errorf("tx %s: outputs %d exceed inputs %d", txid, out, in)
		}
		fees += in - out
	}
	return fees, nil
}

// assemble creates the coinbase, witness commitment and header, and solves
// the (trivial regtest) proof of work.
func (g *Generator) assemble(height int32, txs []*wire.MsgTx, fees int64) (*wire.MsgBlock, error) {
	if g.timeStep < 1 {
		return nil, fmt.Errorf("timestamp step %ds: blocks need increasing timestamps", g.timeStep)
	}
	// BIP34: the scriptSig starts with the height, which also keeps
	// coinbase txids unique; the tag (with the fork salt) follows.
	sigScript, err := txscript.NewScriptBuilder().AddInt64(int64(height)).
		AddData([]byte("/chaingen:" + g.salt + "/")).Script()
	if err != nil {
		return nil, err
	}
	payout, err := g.reg.get(minerKinds[int(height)%len(minerKinds)], MinerIndex)
	if err != nil {
		return nil, err
	}
	cb := wire.NewMsgTx(2)
	cb.AddTxIn(&wire.TxIn{
		PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex},
		SignatureScript:  sigScript,
		Sequence:         wire.MaxTxInSequenceNum,
	})
	cb.AddTxOut(&wire.TxOut{
		Value:    blockchain.CalcBlockSubsidy(height, g.params) + fees,
		PkScript: payout.pkScript,
	})

	all := make([]*btcutil.Tx, 0, len(txs)+1)
	all = append(all, btcutil.NewTx(cb))
	witness := false
	for _, tx := range txs {
		all = append(all, btcutil.NewTx(tx))
		witness = witness || tx.HasWitness()
	}
	if witness {
		mining.AddWitnessCommitment(all[0], all)
		all[0] = btcutil.NewTx(cb) // the coinbase changed; drop any cached hash
	}

	b := &wire.MsgBlock{
		Header: wire.BlockHeader{
			Version:    blockVersion,
			PrevBlock:  g.hashes[len(g.hashes)-1],
			MerkleRoot: blockchain.CalcMerkleRoot(all, false),
			Timestamp:  time.Unix(g.timeStart+g.timeStep*int64(height), 0),
			Bits:       g.params.PowLimitBits,
		},
		Transactions: make([]*wire.MsgTx, 0, len(all)),
	}
	b.Transactions = append(b.Transactions, cb)
	b.Transactions = append(b.Transactions, txs...)
	if w := blockchain.GetBlockWeight(btcutil.NewBlock(b)); w > blockchain.MaxBlockWeight {
		return nil, fmt.Errorf("weight %d exceeds the consensus limit %d", w, blockchain.MaxBlockWeight)
	}
	if err := solve(&b.Header); err != nil {
		return nil, err
	}
	return b, nil
}

// solve searches nonces from 0; at regtest's PoW limit about half of all
// hashes qualify.
func solve(h *wire.BlockHeader) error {
	target := blockchain.CompactToBig(h.Bits)
	for nonce := uint32(0); ; nonce++ {
		h.Nonce = nonce
		hash := h.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(target) <= 0 {
			return nil
		}
		if nonce == ^uint32(0) {
			return fmt.Errorf("no nonce solves bits %08x; chaingen needs regtest-like PoW", h.Bits)
		}
	}
}

// connect appends a valid block and applies it to the UTXO view and wallet.
// Txs staged by the demo builder are already reflected in the wallet.
func (g *Generator) connect(b *wire.MsgBlock) {
	height := int32(len(g.blocks))
	for i, tx := range b.Transactions {
		txid := tx.TxHash()
		coinbase := i == 0
		if !coinbase {
			for _, in := range tx.TxIn {
				delete(g.view, in.PreviousOutPoint)
			}
		}
		for j, o := range tx.TxOut {
			if txscript.IsUnspendable(o.PkScript) {
				continue
			}
			g.view[wire.OutPoint{Hash: txid, Index: uint32(j)}] = coin{value: o.Value, height: height, coinbase: coinbase}
		}
		if _, ok := g.staged[txid]; ok {
			delete(g.staged, txid)
			continue
		}
		g.wallet.applyTx(g.reg, tx, txid, height, coinbase)
	}
	g.blocks = append(g.blocks, b)
	g.hashes = append(g.hashes, b.BlockHash())
}
