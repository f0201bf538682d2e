package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// ethTxSource answers tx-specific/{txid} and rawtx/{txid} on an
// Ethereum-type chain whose node describes txs (bchain.EthTxSource).
type ethTxSource struct {
	*EthService
	src bchain.EthTxSource
}

var (
	_ TxSpecificQueries = ethTxSource{}
	_ RawTxQueries      = ethTxSource{}
)

// txHash validates a txid parameter; a tx the node does not know is
// reported in the words of the tx/ answer.
func (s ethTxSource) txHash(txid string) (bchain.Hash, error) {
	return parseTxid(s.trimHex(txid))
}

func (s ethTxSource) notFound(h bchain.Hash, err error) error {
	if errors.Is(err, bchain.ErrTxNotFound) {
		return &Error{Msg: fmt.Sprintf("Transaction '%s' not found", s.hashString(h)), Err: err}
	}
	return err
}

// TxSpecific answers the node's view of a tx with its receipt, in
// Blockbook's shape {"tx": …, "receipt": …} (no receipt while pending).
func (s ethTxSource) TxSpecific(ctx context.Context, txid string) (json.RawMessage, error) {
	h, err := s.txHash(txid)
	if err != nil {
		return nil, err
	}
	out, err := s.src.TxSpecific(ctx, h)
	if err != nil {
		return nil, s.notFound(h, err)
	}
	return out, nil
}

// RawTx answers the signed tx in 0x-prefixed hex, as Blockbook's (the
// node's eth_getRawTransactionByHash).
func (s ethTxSource) RawTx(ctx context.Context, txid string) (string, error) {
	h, err := s.txHash(txid)
	if err != nil {
		return "", err
	}
	raw, err := s.src.RawTx(ctx, h)
	if err != nil {
		return "", s.notFound(h, err)
	}
	return "0x" + hex.EncodeToString(raw), nil
}
