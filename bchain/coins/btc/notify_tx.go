package btc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/openexplorer/blockbook/bchain"
)

// Tx notifications tell the mempool about each tx the node accepts, so that
// it reaches websocket subscribers at once. Like block notifications they
// are hints: the mempool's periodic resync repairs anything lost.

// ZMQTxNotifier subscribes to Bitcoin Core's ZMQ "hashtx" topic
// (-zmqpubhashtx, on the same endpoint as hashblock in Blockbook's setup).
type ZMQTxNotifier struct {
	Endpoint string // message_queue_binding
	Log      *slog.Logger
}

var _ bchain.TxNotifier = (*ZMQTxNotifier)(nil)

// Run subscribes and calls signal with every announced txid. Core publishes
// the 32-byte txid in display order; other bodies are ignored.
func (z *ZMQTxNotifier) Run(ctx context.Context, signal func(txid bchain.Hash)) error {
	return runZMQ(ctx, orDefault(z.Log), "zmq-tx", z.Endpoint, "hashtx", "the mempool resync covers the gap", func(body []byte) {
		if len(body) == len(bchain.Hash{}) {
			signal(bchain.Hash(body))
		}
	})
}

// BtcdTxNotifier uses btcd's websocket RPC: notifynewtransactions (not
// verbose), then a txaccepted notification [txid, amount] per tx.
type BtcdTxNotifier struct {
	RPCURL, User, Pass string
	Log                *slog.Logger
}

var _ bchain.TxNotifier = (*BtcdTxNotifier)(nil)

// Run connects to btcd's /ws endpoint and signals every accepted txid.
func (b *BtcdTxNotifier) Run(ctx context.Context, signal func(txid bchain.Hash)) error {
	const subscribe = `{"jsonrpc":"1.0","id":1,"method":"notifynewtransactions","params":[false]}`
	log := orDefault(b.Log)
	return runBtcdWS(ctx, log, "btcd-ws-tx", b.RPCURL, b.User, b.Pass, subscribe, func(method string, params json.RawMessage) {
		if method != "txaccepted" {
			return
		}
		txid, err := txAcceptedID(params)
		if err != nil {
			log.Debug("ignoring a malformed txaccepted notification", "err", err)
			return
		}
		signal(txid)
	})
}

// txAcceptedID extracts the txid from txaccepted's params [txid, amount].
func txAcceptedID(params json.RawMessage) (bchain.Hash, error) {
	var p []json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil || len(p) == 0 {
		return bchain.Hash{}, fmt.Errorf("params %.80s are not [txid, amount]", params)
	}
	var s string
	if err := json.Unmarshal(p[0], &s); err != nil {
		return bchain.Hash{}, fmt.Errorf("txid %.80s is not a string", p[0])
	}
	return bchain.ParseHash(s)
}

// pickTxNotifier chooses the push channel for mempool txs the same way
// pickNotifier does for blocks (block_notifications); nil means the mempool
// relies on its periodic resyncs.
func pickTxNotifier(cfg *bchain.Config, node *Node) bchain.TxNotifier {
	zmq := &ZMQTxNotifier{Endpoint: cfg.MessageQueueBinding, Log: node.log}
	btcd := &BtcdTxNotifier{RPCURL: cfg.RPCURL, User: cfg.RPCUser, Pass: cfg.RPCPass, Log: node.log}
	switch cfg.BlockNotifications {
	case "none":
		return nil
	case "zmq":
		return zmq // pickNotifier has checked message_queue_binding
	case "btcd":
		return btcd
	}
	if cfg.MessageQueueBinding != "" {
		return zmq
	}
	return &autoTxNotifier{node: node, btcd: btcd}
}

// autoTxNotifier waits until the node answers, then uses btcd's websocket
// notifications if the node is btcd; for Core without ZMQ the mempool
// follows by resyncs only.
type autoTxNotifier struct {
	node *Node
	btcd *BtcdTxNotifier
}

func (a *autoTxNotifier) Run(ctx context.Context, signal func(bchain.Hash)) error {
	if isBtcd(ctx, a.node, "following the mempool by periodic resyncs") {
		return a.btcd.Run(ctx, signal)
	}
	return nil
}
