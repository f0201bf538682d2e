package esplora

import (
	"encoding/hex"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// Esplora's tx shape (electrs' TransactionValue) and the small objects
// around it.

// txStatus is where a tx (or a spend, or a UTXO's funding tx) is confirmed.
type txStatus struct {
	Confirmed   bool    `json:"confirmed"`
	BlockHeight *uint32 `json:"block_height,omitempty"`
	BlockHash   string  `json:"block_hash,omitempty"`
	BlockTime   *int64  `json:"block_time,omitempty"`
}

func statusOf(b *api.EsploraBlockRef) txStatus {
	if b == nil {
		return txStatus{}
	}
	h, t := b.Height, b.Time
	return txStatus{Confirmed: true, BlockHeight: &h, BlockHash: b.Hash.String(), BlockTime: &t}
}

type txOut struct {
	Scriptpubkey        string `json:"scriptpubkey"`
	ScriptpubkeyAsm     string `json:"scriptpubkey_asm"`
	ScriptpubkeyType    string `json:"scriptpubkey_type"`
	ScriptpubkeyAddress string `json:"scriptpubkey_address,omitempty"`
	Value               uint64 `json:"value"`
}

type txIn struct {
	Txid                  string   `json:"txid"`
	Vout                  uint32   `json:"vout"`
	Prevout               *txOut   `json:"prevout"`
	Scriptsig             string   `json:"scriptsig"`
	ScriptsigAsm          string   `json:"scriptsig_asm"`
	Witness               []string `json:"witness,omitempty"`
	IsCoinbase            bool     `json:"is_coinbase"`
	Sequence              uint32   `json:"sequence"`
	InnerRedeemscriptAsm  string   `json:"inner_redeemscript_asm,omitempty"`
	InnerWitnessscriptAsm string   `json:"inner_witnessscript_asm,omitempty"`
}

type txValue struct {
	Txid     string    `json:"txid"`
	Version  uint32    `json:"version"`
	Locktime uint32    `json:"locktime"`
	Vin      []txIn    `json:"vin"`
	Vout     []txOut   `json:"vout"`
	Size     int       `json:"size"`
	Weight   int       `json:"weight"`
	Fee      uint64    `json:"fee"`
	Status   *txStatus `json:"status,omitempty"`
}

// spendValue is an output's spending status (outspend/outspends).
type spendValue struct {
	Spent  bool      `json:"spent"`
	Txid   string    `json:"txid,omitempty"`
	Vin    *uint32   `json:"vin,omitempty"`
	Status *txStatus `json:"status,omitempty"`
}

func spendOf(sp api.EsploraSpend) spendValue {
	if !sp.Spent {
		return spendValue{}
	}
	vin, st := sp.Vin, statusOf(sp.Block)
	return spendValue{Spent: true, Txid: sp.Txid.String(), Vin: &vin, Status: &st}
}

// coinbaseVout is the prevout index of a coinbase input.
const coinbaseVout = 0xffffffff

func (s *Server) outValue(script []byte, value uint64) txOut {
	o := txOut{
		Scriptpubkey: hex.EncodeToString(script), ScriptpubkeyAsm: scriptAsm(script),
		ScriptpubkeyType: scriptType(script), Value: value,
	}
	if hasAddress(script) {
		if a, ok := s.svc.DescAddress(bchain.AddrDesc(script)); ok {
			o.ScriptpubkeyAddress = a
		}
	}
	return o
}

// txValueOf renders a tx in Esplora's shape.
func (s *Server) txValueOf(t *api.EsploraTx) txValue {
	tx := t.Tx
	out := txValue{
		Txid: tx.Txid.String(), Version: uint32(tx.Version), Locktime: tx.LockTime,
		Vin: make([]txIn, len(tx.Vin)), Vout: make([]txOut, len(tx.Vout)),
		Size: tx.Size, Weight: t.Weight, Fee: t.Fee(),
	}
	st := statusOf(t.Block)
	out.Status = &st
	for i := range tx.Vin {
		out.Vin[i] = s.inValue(&tx.Vin[i], t.Prevouts[i])
	}
	for n, o := range tx.Vout {
		out.Vout[n] = s.outValue(o.Script, o.Value)
	}
	return out
}

func (s *Server) inValue(in *bchain.Vin, prev *api.EsploraTxo) txIn {
	v := txIn{
		Txid: in.PrevTxid.String(), Vout: in.PrevVout, Scriptsig: hex.EncodeToString(in.ScriptSig),
		ScriptsigAsm: scriptAsm(in.ScriptSig), IsCoinbase: in.Coinbase, Sequence: in.Sequence,
	}
	if in.Coinbase {
		v.Txid, v.Vout = bchain.Hash{}.String(), coinbaseVout
	}
	for _, w := range in.Witness {
		v.Witness = append(v.Witness, hex.EncodeToString(w))
	}
	if prev == nil {
		return v
	}
	po := s.outValue(prev.Script, prev.Value)
	v.Prevout = &po
	redeem, witness := innerScripts(in, prev.Script)
	if redeem != nil {
		v.InnerRedeemscriptAsm = scriptAsm(redeem)
	}
	if witness != nil {
		v.InnerWitnessscriptAsm = scriptAsm(witness)
	}
	return v
}

// innerScripts finds the redeem script of a P2SH spend (the scriptSig's
// last push) and the witness script of a P2WSH spend (native or nested:
// the last witness item) or of a taproot script-path spend (the item
// before the control block, after dropping an annex).
func innerScripts(in *bchain.Vin, prevScript []byte) (redeem, witness []byte) {
	typ := scriptType(prevScript)
	if typ == "p2sh" {
		redeem = lastPush(in.ScriptSig)
	}
	w := in.Witness
	switch {
	case (typ == "v0_p2wsh" || redeem != nil && scriptType(redeem) == "v0_p2wsh") && len(w) > 0:
		witness = w[len(w)-1]
	case typ == "v1_p2tr":
		if len(w) >= 2 && len(w[len(w)-1]) > 0 && w[len(w)-1][0] == 0x50 {
			w = w[:len(w)-1] // the annex
		}
		if len(w) >= 2 {
			witness = w[len(w)-2]
		}
	}
	return redeem, witness
}
