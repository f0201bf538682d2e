package e2e

import (
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

// compareLtcIndexes is compareIndexes for Litecoin Regtest datadirs.
func compareLtcIndexes(t testing.TB, dirA, dirB string) {
	t.Helper()
	compareIndexesOf(t, db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Litecoin Regtest", Network: "litecoin-regtest"}, dirA, dirB)
}

// checkLtcBlocks requires every MWEB block to show litecoind's nTx as its
// txCount, and the txs of the MWEB blocks (HogEx and peg-ins included) and
// a sample of the others to show the ledger's height and fees (canonical
// inputs minus outputs).
func checkLtcBlocks(t *testing.T, base string, l *chaingen.Ledger, blocks []ltcregtest.Block) {
	t.Helper()
	mweb := 0
	for _, b := range blocks {
		if !b.MWEB && b.Height%50 != 0 {
			continue
		}
		var blk api.Block
		getJSON(t, fmt.Sprintf("%s/api/v2/block/%d", base, b.Height), 200, &blk)
		if blk.Hash != b.Hash || blk.TxCount != b.NTx {
			t.Errorf("block %d: hash %s txCount %d; litecoind %s nTx %d", b.Height, blk.Hash, blk.TxCount, b.Hash, b.NTx)
		}
		for _, txid := range b.Txids {
			var tx api.Tx
			getJSON(t, base+"/api/v2/tx/"+txid, 200, &tx)
			want := l.Txs[txid]
			if tx.BlockHeight != int64(want.Height) || tx.Fees.String() != fmt.Sprint(want.Fee) {
				t.Errorf("tx %s: height %d fees %s; ledger %d %d", txid, tx.BlockHeight, tx.Fees, want.Height, want.Fee)
			}
		}
		if b.MWEB {
			mweb++
		}
	}
	if mweb < 5 {
		t.Fatalf("only %d MWEB blocks in the chain", mweb)
	}
}

// A blockbook syncing litecoind's generated chain (every script kind, MWEB
// blocks with peg-ins, peg-outs and MWEB-only txs) over RPC reports for
// every address what litecoind's own decoding of the blocks says; a second
// one downloading the blocks over P2P builds a byte-identical index.
func TestLtcSyncLedger(t *testing.T) {
	st := startLtcStack(t, nil, nil)
	l, blocks := ltcLedger(t, st.node)
	checkLedger(t, st.inst.base, l)
	checkLtcBlocks(t, st.inst.base, l, blocks)
	// Peg-outs pay canonical addresses from the HogEx.
	for _, b := range blocks {
		if b.PegOuts > 0 && l.Txs[b.HogEx].Position != len(b.Txids)-1 {
			t.Errorf("block %d: HogEx %s not last", b.Height, b.HogEx)
		}
	}
	// Accounts with Litecoin Regtest's key versions (tpub, upub, vpub) sum
	// their addresses, a gap included.
	if len(st.sc.Accounts) != 3 {
		t.Fatalf("scenario has %d accounts", len(st.sc.Accounts))
	}
	for purpose, acct := range st.sc.Accounts {
		var want int64
		for _, a := range acct.Addresses {
			want += l.Addresses[a].Balance
		}
		var got api.Address
		getJSON(t, st.inst.base+"/api/v2/xpub/"+acct.Xpub+"?gap=5", 200, &got)
		if got.Balance.String() != fmt.Sprint(want) || got.Txs != 1 || want == 0 {
			t.Errorf("BIP%s account %s: balance %s txs %d; ledger %d, 1 tx", purpose, acct.Xpub, got.Balance, got.Txs, want)
		}
	}
	st.inst.stop(t)

	p2pCfg := writeLtcConfig(t, st.node, map[string]any{"p2p_address": st.node.P2PAddr})
	p2pDir := t.TempDir()
	p2p := startInProcess(t, p2pCfg, p2pDir, nil)
	waitTip(t, p2p.base, st.sc.TipHeight, st.sc.TipHash, p2p.logs)
	p2p.stop(t)
	compareLtcIndexes(t, st.dataDir, p2pDir)
}
