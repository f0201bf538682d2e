package mesh

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/bip352"
)

// The Construction API's offline part for Bitcoin-type coins with
// Bitcoin's tx format and segwit: txs spending P2WPKH and P2TR (key-path)
// outputs, paying any address. Intent operations are INPUT (a coin spent: its account, a
// negative amount, coin_change coin_spent) and OUTPUT (an account and a
// positive amount); the fee is what the inputs spend and the outputs do
// not pay. Signing is the caller's: ecdsa over secp256k1 of the BIP143
// sighash with SIGHASH_ALL (P2WPKH), BIP340 schnorr of the BIP341 sighash
// with SIGHASH_DEFAULT (P2TR; taproot.go).

// txVersion and txSequence of the txs built: version 2, and a sequence
// that signals replaceability (BIP125) and leaves the lock time off.
const (
	txVersion  = 2
	txSequence = wire.MaxTxInSequenceNum - 2
	maxTxBlob  = 200_000 // a blob's length in bytes, ample for any standard tx
)

// txBlob is the unsigned_transaction and signed_transaction strings (as
// JSON text): the tx, and what it alone does not say about its inputs
// (the spent outputs' accounts and amounts, which parse shows and the
// sighash covers).
type txBlob struct {
	Transaction string      `json:"transaction"` // hex
	Inputs      []blobInput `json:"inputs"`
}

type blobInput struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
}

// intent is a payment the operations describe.
type intent struct {
	inputs  []intentInput
	outputs []intentOutput
}

type intentInput struct {
	account string
	script  []byte // the spent output's, a P2WPKH or a P2TR
	amount  int64
	op      wire.OutPoint
}

type intentOutput struct {
	script []byte
	amount int64
}

// readIntent validates intent operations.
func (s *Server) readIntent(ops []Operation) (*intent, error) {
	if len(ops) == 0 {
		return nil, fail(errBadIntent, "no operations")
	}
	it := &intent{}
	var in, out int64
	for i, op := range ops {
		if op.Status != "" || op.Account == nil || op.Amount == nil || op.Account.SubAccount != nil {
			return nil, fail(errBadIntent, "operation %d: an intent has an account and an amount, no status and no sub-account", i)
		}
		if err := s.checkCurrencies([]Currency{derefCurrency(op.Amount.Currency)}); err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(op.Amount.Value, 10, 64)
		if err != nil {
			return nil, fail(errBadIntent, "operation %d: amount %q", i, truncate(op.Amount.Value, 40))
		}
		desc, err := s.accountDesc(op.Account)
		if err != nil {
			return nil, err
		}
		switch op.Type {
		case opInput:
			if v >= 0 || op.CoinChange == nil || op.CoinChange.CoinAction != "coin_spent" {
				return nil, fail(errBadIntent, "operation %d: an input spends a coin (coin_spent) with a negative amount", i)
			}
			if !spendable(desc) {
				return nil, fail(errBadIntent, "operation %d: only P2WPKH and P2TR outputs can be spent", i)
			}
			outpoint, err := parseCoin(op.CoinChange.CoinIdentifier.Identifier)
			if err != nil {
				return nil, fail(errBadIntent, "operation %d: %v", i, err)
			}
			if it.spends(outpoint) {
				return nil, fail(errBadIntent, "operation %d: coin %s is spent twice", i, outpoint)
			}
			it.inputs = append(it.inputs, intentInput{account: op.Account.Address, script: desc, amount: -v, op: outpoint})
			in += -v
		case opOutput:
			if v < 0 || (op.CoinChange != nil && op.CoinChange.CoinAction != "coin_created") {
				return nil, fail(errBadIntent, "operation %d: an output pays a non-negative amount", i)
			}
			if strings.HasPrefix(op.Account.Address, scriptPrefix) {
				return nil, fail(errBadIntent, "operation %d: pay an address", i)
			}
			it.outputs = append(it.outputs, intentOutput{script: desc, amount: v})
			out += v
		default:
			return nil, fail(errBadIntent, "operation %d: type %q; an intent has INPUT and OUTPUT operations", i, truncate(op.Type, 20))
		}
	}
	if len(it.inputs) == 0 || len(it.outputs) == 0 || in < out {
		return nil, fail(errBadIntent, "an intent spends at least one coin, pays at least one output, and pays no more than it spends")
	}
	return it, nil
}

func (it *intent) spends(op wire.OutPoint) bool {
	for _, in := range it.inputs {
		if in.op == op {
			return true
		}
	}
	return false
}

func derefCurrency(c *Currency) Currency {
	if c == nil {
		return Currency{}
	}
	return *c
}

func isP2WPKH(script []byte) bool {
	return len(script) == 22 && script[0] == txscript.OP_0 && script[1] == txscript.OP_DATA_20
}

// parseCoin reads "<txid>:<vout>".
func parseCoin(id string) (wire.OutPoint, error) {
	txs, vs, ok := strings.Cut(id, ":")
	vout, err := strconv.ParseUint(vs, 10, 32)
	h, herr := chainhash.NewHashFromStr(txs)
	if !ok || err != nil || herr != nil || len(txs) != 64 {
		return wire.OutPoint{}, errString("coin " + strconv.Quote(truncate(id, 100)) + " is not <txid>:<vout>")
	}
	return wire.OutPoint{Hash: *h, Index: uint32(vout)}, nil
}

type errString string

func (e errString) Error() string { return string(e) }

// build makes the unsigned tx of an intent.
func (it *intent) build() (*wire.MsgTx, *txBlob) {
	tx := wire.NewMsgTx(txVersion)
	blob := &txBlob{}
	for _, in := range it.inputs {
		ti := wire.NewTxIn(&in.op, nil, nil)
		ti.Sequence = txSequence
		tx.AddTxIn(ti)
		blob.Inputs = append(blob.Inputs, blobInput{Account: in.account, Amount: in.amount})
	}
	for _, o := range it.outputs {
		tx.AddTxOut(wire.NewTxOut(o.amount, o.script))
	}
	return tx, blob
}

// encode renders a blob with its tx.
func (b *txBlob) encode(tx *wire.MsgTx) (string, error) {
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return "", err
	}
	b.Transaction = hex.EncodeToString(buf.Bytes())
	j, err := json.Marshal(b)
	return string(j), err
}

// readBlob decodes a blob: the tx, and the spent outputs' scripts (from
// their accounts, P2WPKH or P2TR) and amounts.
func (s *Server) readBlob(v string) (*wire.MsgTx, *txBlob, [][]byte, error) {
	var b txBlob
	if len(v) > maxTxBlob {
		return nil, nil, nil, fail(errBadTxBlob, "over %d bytes", maxTxBlob)
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, nil, nil, fail(errBadTxBlob, "not a transaction of this server: %v", err)
	}
	raw, err := hex.DecodeString(b.Transaction)
	if err != nil {
		return nil, nil, nil, fail(errBadTxBlob, "transaction hex: %v", err)
	}
	tx := &wire.MsgTx{}
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, nil, nil, fail(errBadTxBlob, "transaction: %v", err)
	}
	if len(b.Inputs) != len(tx.TxIn) {
		return nil, nil, nil, fail(errBadTxBlob, "%d inputs described, the tx has %d", len(b.Inputs), len(tx.TxIn))
	}
	scripts := make([][]byte, len(b.Inputs))
	for i, in := range b.Inputs {
		desc, err := s.accountDesc(&AccountIdentifier{Address: in.Account})
		if err != nil || !spendable(desc) || in.Amount <= 0 {
			return nil, nil, nil, fail(errBadTxBlob, "input %d: %q is not a P2WPKH or P2TR address with an amount", i, truncate(in.Account, 80))
		}
		scripts[i] = desc
	}
	return tx, &b, scripts, nil
}

func amountsOf(b *txBlob) []int64 {
	out := make([]int64, len(b.Inputs))
	for i, in := range b.Inputs {
		out[i] = in.Amount
	}
	return out
}

// intentOps are a tx's intent operations, as payloads takes them: parse
// answers them so that a caller can compare them with its intent.
func (s *Server) intentOps(tx *wire.MsgTx, b *txBlob) []Operation {
	ops := make([]Operation, 0, len(tx.TxIn)+len(tx.TxOut))
	for i, in := range tx.TxIn {
		ops = append(ops, Operation{OperationIdentifier: OperationIdentifier{Index: int64(len(ops))}, Type: opInput,
			Account: &AccountIdentifier{Address: b.Inputs[i].Account}, Amount: s.amount(-b.Inputs[i].Amount),
			CoinChange: &CoinChange{CoinIdentifier: CoinIdentifier{Identifier: in.PreviousOutPoint.String()}, CoinAction: "coin_spent"}})
	}
	for _, o := range tx.TxOut {
		ops = append(ops, Operation{OperationIdentifier: OperationIdentifier{Index: int64(len(ops))}, Type: opOutput,
			Account: s.account(bchain.AddrDesc(o.PkScript)), Amount: s.amount(o.Value)})
	}
	return ops
}

// vsize estimates a tx's virtual size: P2WPKH inputs of 68 vbytes (a
// signature of 72 bytes at most), P2TR key-path inputs of 58 (57.5: a
// 64-byte signature), each output its 9 bytes and script, and 11 bytes of
// version, counts, lock time and segwit marker.
func (it *intent) vsize() int64 {
	n := int64(11)
	for _, in := range it.inputs {
		if bip352.IsP2TR(in.script) {
			n += 58
		} else {
			n += 68
		}
	}
	for _, o := range it.outputs {
		n += 9 + int64(len(o.script))
	}
	return n
}
