package api

// Wire types of REST /api/v1 (and of the unversioned /api/... paths on
// Bitcoin-type chains): Blockbook's legacy, Insight-like shapes. Amounts are
// decimal coin strings; the satoshi amount of a UTXO is a JSON number. Field
// names, order and optionality are Blockbook 0.6.0's (misspellings such as
// txApperances included: clients match on them).

import (
	"encoding/json"
)

// ScriptSigV1 is an input's script.
type ScriptSigV1 struct {
	Hex string `json:"hex,omitempty"`
	Asm string `json:"asm,omitempty"`
}

// VinV1 is a tx input in v1. A coinbase input has an empty txid and value.
type VinV1 struct {
	Txid      string      `json:"txid"`
	Vout      uint32      `json:"vout"`
	Sequence  int64       `json:"sequence,omitempty"`
	N         int         `json:"n"`
	ScriptSig ScriptSigV1 `json:"scriptSig"`
	Addresses []string    `json:"addresses"`
	Value     string      `json:"value"`
}

// ScriptPubKeyV1 is an output's script and addresses.
type ScriptPubKeyV1 struct {
	Hex       string   `json:"hex,omitempty"`
	Asm       string   `json:"asm,omitempty"`
	Addresses []string `json:"addresses"`
	Type      string   `json:"type,omitempty"`
}

// VoutV1 is a tx output in v1.
type VoutV1 struct {
	Value        string         `json:"value"`
	N            int            `json:"n"`
	ScriptPubKey ScriptPubKeyV1 `json:"scriptPubKey"`
	Spent        bool           `json:"spent"`
	SpentTxID    string         `json:"spentTxId,omitempty"`
	SpentIndex   int            `json:"spentIndex,omitempty"`
	SpentHeight  int            `json:"spentHeight,omitempty"`
}

// TxV1 is a transaction in v1. Time repeats the block time (for a pending
// tx: when it was first seen), as Blockbook's does.
type TxV1 struct {
	Txid          string   `json:"txid"`
	Version       int32    `json:"version,omitempty"`
	Locktime      uint32   `json:"locktime,omitempty"`
	Vin           []VinV1  `json:"vin"`
	Vout          []VoutV1 `json:"vout"`
	Blockhash     string   `json:"blockhash,omitempty"`
	Blockheight   int64    `json:"blockheight"`
	Confirmations uint32   `json:"confirmations"`
	Time          int64    `json:"time,omitempty"`
	Blocktime     int64    `json:"blocktime"`
	ValueOut      string   `json:"valueOut"`
	Size          int      `json:"size,omitempty"`
	ValueIn       string   `json:"valueIn"`
	Fees          string   `json:"fees"`
	Hex           string   `json:"hex"`
}

// AddressV1 is an address (or, on the unversioned xpub path, an account)
// in v1: txids under "transactions", full txs under "txs".
type AddressV1 struct {
	Paging
	AddrStr                 string   `json:"addrStr"`
	Balance                 string   `json:"balance"`
	TotalReceived           string   `json:"totalReceived"`
	TotalSent               string   `json:"totalSent"`
	UnconfirmedBalance      string   `json:"unconfirmedBalance"`
	UnconfirmedTxApperances int      `json:"unconfirmedTxApperances"`
	TxApperances            int      `json:"txApperances"`
	Transactions            []*TxV1  `json:"txs,omitempty"`
	Txids                   []string `json:"transactions,omitempty"`
}

// UtxoV1 is an unspent output in v1: amount in coins, satoshis as a JSON
// number.
type UtxoV1 struct {
	Txid          string      `json:"txid"`
	Vout          uint32      `json:"vout"`
	Amount        string      `json:"amount"`
	Satoshis      json.Number `json:"satoshis"`
	Height        int64       `json:"height,omitempty"`
	Confirmations uint32      `json:"confirmations"`
}

// BlockV1 is a block with a page of its txs in v1.
type BlockV1 struct {
	Paging
	BlockInfo
	TxCount int     `json:"txCount"`
	Txs     []*TxV1 `json:"txs,omitempty"`
}
