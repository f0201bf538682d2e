package scalegen

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// regtestXpubParser is the account parser of the "Regtest" coin, built as
// bchain/coins/btc builds it for a config without xpub magics.
func regtestXpubParser() *btc.XpubParser {
	return btc.NewXpubParser(&chaincfg.RegressionNetParams, btc.Magics{}, 1)
}

// TestAccountMatchesXpubParser checks that the indexer's xpub parser takes
// the account's vpub (and the same key as a tpub descriptor) as a BIP84
// account and derives the scripts the generator writes, and that a spend's
// witness carries the key of its script.
func TestAccountMatchesXpubParser(t *testing.T) {
	p := regtestXpubParser()
	vpub := AccountXpub()
	d, err := p.ParseXpub(vpub)
	if err != nil {
		t.Fatalf("%s: %v", vpub, err)
	}
	if d.ScriptType != bchain.XpubP2WPKH || d.BasePath != "m/84'/1'/0'" {
		t.Fatalf("%s: script type %v, path %s", vpub, d.ScriptType, d.BasePath)
	}
	k, err := hdkeychain.NewKeyFromString(vpub)
	if err == nil {
		k, err = k.CloneWithVersion(chaincfg.RegressionNetParams.HDPublicKeyID[:])
	}
	if err != nil {
		t.Fatal(err)
	}
	desc, err := p.ParseXpub("wpkh(" + k.String() + "/<0;1>/*)")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*bchain.XpubDescriptor{d, desc} {
		for c := uint32(0); c < 2; c++ {
			want, err := p.DeriveAddrDescs(d, c, 0, 31)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				id := accountID(c, uint32(i))
				if got := appendPkScript(nil, kindP2WPKH, id); !bytes.Equal(got, w) {
					t.Fatalf("%s %d/%d: generator writes %x, parser derives %x", d.Descriptor, c, i, got, w)
				}
				wit := appendWitness(nil, kindP2WPKH, id)
				if pub := wit[len(wit)-33:]; !bytes.Equal(address.Hash160(pub), w[2:]) {
					t.Fatalf("%d/%d: the witness key %x is not the script's", c, i, pub)
				}
			}
		}
	}
}

// TestAccountStatsMatchBlocks recounts the account from the generated
// blocks as the indexer would find it: a gap-limit-20 scan of both chains
// over the chain's output scripts, then every tx paying or spending them.
func TestAccountStatsMatchBlocks(t *testing.T) {
	dir := t.TempDir()
	st, err := Generate(dir, Options{Txs: 3000, MaxBlockTxs: 50, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	txs := readTxs(t, dir)
	outputs := map[string]bool{}
	for _, tx := range txs {
		for _, o := range tx.TxOut {
			outputs[string(o.PkScript)] = true
		}
	}
	p := regtestXpubParser()
	d, err := p.ParseXpub(st.Account.Xpub)
	if err != nil {
		t.Fatal(err)
	}
	mine, used := map[string]bool{}, 0
	for c := uint32(0); c < 2; c++ {
		for i, gap := uint32(0), 0; gap < 20; i++ {
			s, err := p.DeriveAddrDescs(d, c, i, i+1)
			if err != nil {
				t.Fatal(err)
			}
			gap++
			if outputs[string(s[0])] {
				mine[string(s[0])], gap = true, 0
				used++
			}
		}
	}
	coins := map[wire.OutPoint]int64{}
	n, balance := 0, int64(0)
	for _, tx := range txs {
		touched := false
		for _, in := range tx.TxIn {
			if v, ok := coins[in.PreviousOutPoint]; ok {
				touched = true
				balance -= v
				delete(coins, in.PreviousOutPoint)
			}
		}
		for v, o := range tx.TxOut {
			if mine[string(o.PkScript)] {
				touched = true
				balance += o.Value
				coins[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(v)}] = o.Value
			}
		}
		if touched {
			n++
		}
	}
	if n < 24 || n != st.Account.Txs || balance != st.Account.Balance || used != st.Account.Addresses {
		t.Fatalf("blocks: %d txs, balance %d, %d used addresses; stats: %+v", n, balance, used, st.Account)
	}
}

// readTxs returns the txs of a generated chain in block order.
func readTxs(t *testing.T, dir string) []*wire.MsgTx {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var txs []*wire.MsgTx
	for h := int32(0); h <= s.Tip(); h++ {
		txs = append(txs, readBlock(t, s, h).Transactions...)
	}
	return txs
}
