package electrum

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// fakeScripts answers api.ScriptQueries by scanning the fixture's blocks
// and mempool on every call: a small stand-in until the index answers
// them. tip lets a test undo blocks (a reorg to a shorter chain).
type fakeScripts struct {
	f      *apitest.Fixture
	blocks []*bchain.Block
	mu     sync.Mutex
	tip    int
}

func newFakeScripts(f *apitest.Fixture) (*fakeScripts, error) {
	fs := &fakeScripts{f: f}
	for h, raw := range f.Raw {
		b, err := f.Parser.ParseBlock(raw)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", h, err)
		}
		fs.blocks = append(fs.blocks, b)
	}
	fs.tip = len(fs.blocks) - 1
	return fs, nil
}

func (fs *fakeScripts) setTip(h int) {
	fs.mu.Lock()
	fs.tip = h
	fs.mu.Unlock()
}

func (fs *fakeScripts) active() []*bchain.Block {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.blocks[:fs.tip+1]
}

type outpoint struct {
	txid bchain.Hash
	vout uint32
}

type prevout struct {
	script []byte
	value  int64
	height int
}

// pending are the mempool's txs oldest first.
func (fs *fakeScripts) pending() []*bchain.Tx {
	var out []*bchain.Tx
	if fs.f.Mempool == nil {
		return nil
	}
	txs := fs.f.Mempool.Txs()
	for i := len(txs) - 1; i >= 0; i-- {
		out = append(out, txs[i].Tx)
	}
	return out
}

// scan visits every output and input of the active chain then of the
// mempool (height -1 for pending txs).
func (fs *fakeScripts) scan(visit func(tx *bchain.Tx, height, pos int, prev map[outpoint]prevout)) map[outpoint]prevout {
	outs := map[outpoint]prevout{}
	add := func(tx *bchain.Tx, h int) {
		for i, o := range tx.Vout {
			outs[outpoint{tx.Txid, uint32(i)}] = prevout{o.Script, int64(o.Value), h}
		}
	}
	for h, b := range fs.active() {
		for pos := range b.Txs {
			add(&b.Txs[pos], h)
			visit(&b.Txs[pos], h, pos, outs)
		}
	}
	pending := fs.pending()
	for _, tx := range pending { // a child may come before its parent
		add(tx, -1)
	}
	for _, tx := range pending {
		visit(tx, -1, -1, outs)
	}
	return outs
}

func (fs *fakeScripts) ScriptByHash(_ context.Context, sh [32]byte) ([]byte, bool, error) {
	var found []byte
	fs.scan(func(tx *bchain.Tx, _, _ int, _ map[outpoint]prevout) {
		for _, o := range tx.Vout {
			if found == nil && sha256.Sum256(o.Script) == sh {
				found = o.Script
			}
		}
	})
	return found, found != nil, nil
}

func touches(tx *bchain.Tx, script []byte, prev map[outpoint]prevout) (pays, spends bool) {
	for _, o := range tx.Vout {
		pays = pays || slices.Equal(o.Script, script)
	}
	for _, in := range tx.Vin {
		if p, ok := prev[outpoint{in.PrevTxid, in.PrevVout}]; ok && !in.Coinbase && slices.Equal(p.script, script) {
			spends = true
		}
	}
	return pays, spends
}

func (fs *fakeScripts) ScriptHistory(_ context.Context, script []byte, limit int) ([]api.ScriptTx, error) {
	var out []api.ScriptTx
	fs.scan(func(tx *bchain.Tx, h, pos int, prev map[outpoint]prevout) {
		pays, spends := touches(tx, script, prev)
		if !pays && !spends {
			return
		}
		if h >= 0 {
			out = append(out, api.ScriptTx{Txid: tx.Txid, Height: uint32(h), Pos: pos})
			return
		}
		st := api.ScriptTx{Txid: tx.Txid, Pos: -1}
		var in, outSum int64
		for _, v := range tx.Vin {
			p := prev[outpoint{v.PrevTxid, v.PrevVout}]
			in += p.value
			st.UnconfirmedInputs = st.UnconfirmedInputs || p.height < 0
		}
		for _, o := range tx.Vout {
			outSum += int64(o.Value)
		}
		st.Fee = in - outSum
		out = append(out, st)
	})
	if len(out) > limit {
		return nil, fmt.Errorf("%d txs: %w", len(out), api.ErrTooManyTxs)
	}
	return out, nil
}

func (fs *fakeScripts) ScriptBalance(_ context.Context, script []byte) (*api.ScriptBalance, error) {
	var b api.ScriptBalance
	fs.scan(func(tx *bchain.Tx, h, _ int, prev map[outpoint]prevout) {
		st := &b.Chain
		if h < 0 {
			st = &b.Mempool
		}
		for _, o := range tx.Vout {
			if slices.Equal(o.Script, script) {
				st.FundedTxoCount++
				st.FundedTxoSum += int64(o.Value)
			}
		}
		for _, in := range tx.Vin {
			if p, ok := prev[outpoint{in.PrevTxid, in.PrevVout}]; ok && !in.Coinbase && slices.Equal(p.script, script) {
				st.SpentTxoCount++
				st.SpentTxoSum += p.value
			}
		}
	})
	return &b, nil
}

func (fs *fakeScripts) ScriptUtxos(_ context.Context, script []byte) ([]api.ScriptUtxo, error) {
	spent := map[outpoint]bool{}
	var all []api.ScriptUtxo
	fs.scan(func(tx *bchain.Tx, h, _ int, _ map[outpoint]prevout) {
		for _, in := range tx.Vin {
			spent[outpoint{in.PrevTxid, in.PrevVout}] = true
		}
		for i, o := range tx.Vout {
			if slices.Equal(o.Script, script) {
				all = append(all, api.ScriptUtxo{Txid: tx.Txid, Vout: uint32(i), Height: uint32(max(h, 0)), Value: int64(o.Value)})
			}
		}
	})
	out := []api.ScriptUtxo{}
	for _, u := range all {
		if !spent[outpoint{u.Txid, u.Vout}] {
			out = append(out, u)
		}
	}
	return out, nil
}

func (fs *fakeScripts) BlockHeaders(_ context.Context, start uint32, count int) ([][]byte, error) {
	var out [][]byte
	blocks := fs.active()
	for h := int(start); h < len(blocks) && len(out) < count; h++ {
		out = append(out, fs.f.Raw[h][:80])
	}
	return out, nil
}

func (fs *fakeScripts) BlockTxids(_ context.Context, height uint32) ([]bchain.Hash, error) {
	blocks := fs.active()
	if int(height) >= len(blocks) {
		return nil, nil
	}
	var out []bchain.Hash
	for _, tx := range blocks[height].Txs {
		out = append(out, tx.Txid)
	}
	return out, nil
}

func (fs *fakeScripts) TxPosition(_ context.Context, txid bchain.Hash) (uint32, int, bool, error) {
	for h, b := range fs.active() {
		for pos, tx := range b.Txs {
			if tx.Txid == txid {
				return uint32(h), pos, true, nil
			}
		}
	}
	return 0, 0, false, nil
}
