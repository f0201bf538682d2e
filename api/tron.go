package api

import (
	"context"
	"encoding/json"

	"github.com/openexplorer/blockbook/bchain"
)

// Tron is served by the account-model service (EthService) with Tron's
// names, as Blockbook serves it from its Ethereum code with a Tron
// parser: base58check addresses (the parser's), ids without 0x (both
// forms accepted), token standards TRC20/TRC721/TRC1155, no gas fields
// (the fee is the TRX burned, the node's info.fee), and chainExtraData
// on txs (built from the node's answers with the block) and addresses
// (read from the node on each request, as Blockbook does).

// ChainExtraData is Blockbook's TxChainExtraData and AccountChainExtraData:
// a payload named by its type ("tron").
type ChainExtraData struct {
	PayloadType string          `json:"payloadType"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// tronPayload is Blockbook's payloadType of Tron's chainExtraData.
const tronPayload = "tron"

// TronAccounts is the node's account data Blockbook adds to a Tron
// address (resources, staking, votes).
type TronAccounts interface {
	AccountChainExtra(ctx context.Context, address string) (any, error)
}

type tronParts struct {
	s     *EthService
	accts TronAccounts // nil: addresses get no chainExtraData
}

// NewTronService returns the query service of a Tron backend.
func NewTronService(d Store, b *bchain.Backend, sync SyncStatus, cfg Config) *EthService {
	s := NewEthService(d, b, sync, cfg)
	s.hexPrefix, s.inPrefix = "", "0x"
	accts, _ := b.Eth.(TronAccounts)
	if accts != nil && cfg.Node != nil {
		accts = gatedTronAccounts{accts, cfg.Node}
	}
	s.tron = &tronParts{s: s, accts: accts}
	return s
}

// gatedTronAccounts fails at once while the probe says the node is down,
// as every other node call of the service does (nodegate.go).
type gatedTronAccounts struct {
	a TronAccounts
	p NodeProbe
}

func (g gatedTronAccounts) AccountChainExtra(ctx context.Context, address string) (any, error) {
	if err := g.p.Check(); err != nil {
		return nil, err
	}
	return g.a.AccountChainExtra(ctx, address)
}

// tronStandard names a token standard as Blockbook's Tron answers do.
func tronStandard(t bchain.TokenStandard) string {
	switch t {
	case bchain.TokenERC20:
		return "TRC20"
	case bchain.TokenERC721:
		return "TRC721"
	case bchain.TokenERC1155:
		return "TRC1155"
	}
	return ""
}

// tx adds chainExtraData and leaves out the gas fields Tron does not
// have (Blockbook's Tron parser zeroes nonce and gas limit and drops the
// gas price and gas used).
func (t *tronParts) tx(out *Tx, tx *bchain.EthTx) {
	if len(tx.ChainExtra) > 0 {
		out.ChainExtraData = &ChainExtraData{PayloadType: tronPayload, Payload: tx.ChainExtra}
	}
	if es := out.EthereumSpecific; es != nil {
		es.Nonce, es.GasLimit, es.GasPrice, es.GasUsed = 0, 0, nil, nil
	}
}

// account reads an address's chainExtraData from the node; a failure is
// logged and the field left out, as Blockbook does.
func (t *tronParts) account(ctx context.Context, address string) *ChainExtraData {
	if t.accts == nil {
		return nil
	}
	v, err := t.accts.AccountChainExtra(ctx, address)
	if err == nil && v != nil {
		raw, err := json.Marshal(v)
		if err == nil {
			return &ChainExtraData{PayloadType: tronPayload, Payload: raw}
		}
	}
	if err != nil && ctx.Err() == nil {
		t.s.log.Warn("tron account data", "address", address, "err", err)
	}
	return nil
}
