package api

import (
	"encoding/json"
	"math/big"
	"strings"
)

// V1 renders v2 answers in Blockbook's v1 shapes: the same objects, amounts
// in coins with Decimals places. Blockbook builds its v1 answers the same
// way, from its v2 ones, so the two always agree on what they show.
type V1 struct {
	Decimals int
}

// AmountV1 renders base units as a decimal coin string without trailing
// zeros ("1.5", "0.00012345", "50"). A missing amount (a coinbase input's
// value) is "", as on Blockbook's v1 wire.
func AmountV1(a *Amount, decimals int) string {
	if a == nil {
		return ""
	}
	n := (*big.Int)(a).String()
	sign := ""
	if n[0] == '-' {
		sign, n = "-", n[1:]
	}
	if decimals <= 0 {
		return sign + n
	}
	if len(n) <= decimals {
		n = strings.Repeat("0", decimals-len(n)+1) + n
	}
	whole, frac := n[:len(n)-decimals], strings.TrimRight(n[len(n)-decimals:], "0")
	if frac == "" {
		return sign + whole
	}
	return sign + whole + "." + frac
}

// Tx converts a tx.
func (c V1) Tx(tx *Tx) *TxV1 {
	vin := make([]VinV1, len(tx.Vin))
	for i := range tx.Vin {
		v := &tx.Vin[i]
		vin[i] = VinV1{
			Txid: v.Txid, Vout: v.Vout, Sequence: v.Sequence, N: v.N,
			ScriptSig: ScriptSigV1{Hex: v.Hex},
			Addresses: v.Addresses,
			Value:     AmountV1(v.Value, c.Decimals),
		}
	}
	vout := make([]VoutV1, len(tx.Vout))
	for i := range tx.Vout {
		v := &tx.Vout[i]
		vout[i] = VoutV1{
			Value: AmountV1(v.Value, c.Decimals), N: v.N,
			ScriptPubKey: ScriptPubKeyV1{Hex: v.Hex, Addresses: v.Addresses},
			Spent:        v.Spent, SpentTxID: v.SpentTxID, SpentIndex: v.SpentIndex, SpentHeight: v.SpentHeight,
		}
	}
	return &TxV1{
		Txid: tx.Txid, Version: tx.Version, Locktime: tx.LockTime, Vin: vin, Vout: vout,
		Blockhash: tx.BlockHash, Blockheight: tx.BlockHeight, Confirmations: tx.Confirmations,
		Time: tx.BlockTime, Blocktime: tx.BlockTime,
		ValueOut: AmountV1(tx.Value, c.Decimals), Size: tx.Size,
		ValueIn: AmountV1(tx.ValueIn, c.Decimals), Fees: AmountV1(tx.Fees, c.Decimals),
		Hex: tx.Hex,
	}
}

func (c V1) txs(txs []*Tx) []*TxV1 {
	out := make([]*TxV1, len(txs))
	for i, tx := range txs {
		out[i] = c.Tx(tx)
	}
	return out
}

// Address converts an address or an account. An unconfirmed balance the v2
// answer leaves out (details=basic) is "0" here, as in Blockbook's v1.
func (c V1) Address(a *Address) *AddressV1 {
	unconfirmed := "0"
	if a.UnconfirmedBalance != nil {
		unconfirmed = AmountV1(a.UnconfirmedBalance, c.Decimals)
	}
	return &AddressV1{
		Paging:  a.Paging,
		AddrStr: a.Address, Balance: AmountV1(a.Balance, c.Decimals),
		TotalReceived: AmountV1(a.TotalReceived, c.Decimals), TotalSent: AmountV1(a.TotalSent, c.Decimals),
		UnconfirmedBalance: unconfirmed, UnconfirmedTxApperances: a.UnconfirmedTxs, TxApperances: a.Txs,
		Transactions: c.txs(a.Transactions), Txids: a.Txids,
	}
}

// Utxos converts a UTXO list (never null on the wire).
func (c V1) Utxos(us []Utxo) []UtxoV1 {
	out := make([]UtxoV1, len(us))
	for i := range us {
		u := &us[i]
		out[i] = UtxoV1{
			Txid: u.Txid, Vout: u.Vout,
			Amount: AmountV1(u.Value, c.Decimals), Satoshis: json.Number(u.Value.String()),
			Height: u.Height, Confirmations: u.Confirmations,
		}
	}
	return out
}

// Block converts a block with its page of txs.
func (c V1) Block(b *Block) *BlockV1 {
	return &BlockV1{Paging: b.Paging, BlockInfo: b.BlockInfo, TxCount: b.TxCount, Txs: c.txs(b.Txs)}
}
