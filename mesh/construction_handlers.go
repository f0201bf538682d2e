package mesh

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/bip352"
)

// defaultConfTarget is the fee estimate's confirmation target when the
// options name none.
const defaultConfTarget = 2

type deriveRequest struct {
	netRequest
	PublicKey *PublicKey     `json:"public_key"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type deriveResponse struct {
	AccountIdentifier AccountIdentifier `json:"account_identifier"`
}

// parsePublicKey reads a compressed secp256k1 key (segwit v0 takes only
// those).
func parsePublicKey(pk *PublicKey) (*btcec.PublicKey, []byte, error) {
	if pk == nil {
		return nil, nil, fail(errBadRequest, "public_key is required")
	}
	if pk.CurveType != "secp256k1" {
		return nil, nil, fail(errBadPublicKey, "curve %q; P2WPKH keys are secp256k1", truncate(pk.CurveType, 20))
	}
	raw, err := hex.DecodeString(pk.HexBytes)
	if err != nil || len(raw) != btcec.PubKeyBytesLenCompressed {
		return nil, nil, fail(errBadPublicKey, "not 33 bytes of a compressed key in hex")
	}
	key, err := btcec.ParsePubKey(raw)
	if err != nil {
		return nil, nil, fail(errBadPublicKey, "%v", err)
	}
	return key, raw, nil
}

// p2wpkh is the output script paying a key.
func p2wpkh(compressed []byte) []byte {
	return append([]byte{txscript.OP_0, txscript.OP_DATA_20}, address.Hash160(compressed)...)
}

// constructionDerive answers a key's address: P2WPKH, or with metadata
// address_type "p2tr" (the default for a secp256k1_bip340 key) the BIP86
// key-path P2TR of the key as internal key.
func (s *Server) constructionDerive(_ context.Context, body []byte) (any, error) {
	var req deriveRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	typ, _ := req.Metadata["address_type"].(string)
	if typ == "" && req.PublicKey != nil && req.PublicKey.CurveType == curveBIP340 {
		typ = "p2tr"
	}
	var script []byte
	switch typ {
	case "", "p2wpkh":
		_, raw, err := parsePublicKey(req.PublicKey)
		if err != nil {
			return nil, err
		}
		script = p2wpkh(raw)
	case "p2tr":
		key, err := parseTaprootKey(req.PublicKey)
		if err != nil {
			return nil, err
		}
		script = p2tr(key)
	default:
		return nil, fail(errBadRequest, "metadata.address_type %q: p2wpkh or p2tr", truncate(typ, 20))
	}
	addr, ok := s.codec.DescAddress(bchain.AddrDesc(script))
	if !ok {
		return nil, fail(errNotImplemented, "this coin has no %s addresses", typ)
	}
	return &deriveResponse{AccountIdentifier: AccountIdentifier{Address: addr}}, nil
}

type operationsRequest struct {
	netRequest
	Operations []Operation    `json:"operations"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	PublicKeys []PublicKey    `json:"public_keys,omitempty"`
}

type preprocessResponse struct {
	Options map[string]any `json:"options"`
}

func (s *Server) readOperations(body []byte) (*intent, error) {
	var req operationsRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	return s.readIntent(req.Operations)
}

func (s *Server) constructionPreprocess(_ context.Context, body []byte) (any, error) {
	it, err := s.readOperations(body)
	if err != nil {
		return nil, err
	}
	return &preprocessResponse{Options: map[string]any{"estimated_vsize": it.vsize()}}, nil
}

type metadataRequest struct {
	netRequest
	Options struct {
		EstimatedVsize     int64 `json:"estimated_vsize"`
		ConfirmationTarget int   `json:"confirmation_target,omitempty"`
	} `json:"options"`
	PublicKeys []PublicKey `json:"public_keys,omitempty"`
}

type metadataResponse struct {
	Metadata     map[string]any `json:"metadata"`
	SuggestedFee []*Amount      `json:"suggested_fee"`
}

// constructionMetadata is online: the fee of the estimated size at the
// node's rate for the confirmation target (our estimator, as estimateFee).
func (s *Server) constructionMetadata(ctx context.Context, body []byte) (any, error) {
	var req metadataRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	o := req.Options
	if o.EstimatedVsize <= 0 || o.EstimatedVsize > 400_000 {
		return nil, fail(errBadRequest, "options.estimated_vsize (from /construction/preprocess) must be 1 to 400000")
	}
	if o.ConfirmationTarget == 0 {
		o.ConfirmationTarget = defaultConfTarget
	}
	fees := s.svc.Capabilities().FeeEstimates
	if fees == nil {
		return nil, fail(errNotImplemented, "this server estimates no fees")
	}
	if err := s.svc.CheckFeeTargets([]int{o.ConfirmationTarget}); err != nil {
		return nil, failWith(errBadRequest, err, "confirmation_target %d", o.ConfirmationTarget)
	}
	est, err := fees.FeeEstimates(ctx, []int{o.ConfirmationTarget}, api.FeeQuery{TxSize: o.EstimatedVsize})
	if err != nil {
		return nil, err
	}
	fee, rate := est[0].FeePerTx, est[0].FeePerUnit
	return &metadataResponse{Metadata: map[string]any{"fee_per_kvbyte": rate, "confirmation_target": o.ConfirmationTarget},
		SuggestedFee: []*Amount{{Value: fee, Currency: s.cur}}}, nil
}

type payloadsResponse struct {
	UnsignedTransaction string           `json:"unsigned_transaction"`
	Payloads            []SigningPayload `json:"payloads"`
}

func (s *Server) constructionPayloads(_ context.Context, body []byte) (any, error) {
	it, err := s.readOperations(body)
	if err != nil {
		return nil, err
	}
	tx, blob := it.build()
	scripts := make([][]byte, len(it.inputs))
	for i, in := range it.inputs {
		scripts[i] = in.script
	}
	hashes, types, err := sighashes(tx, scripts, amountsOf(blob))
	if err != nil {
		return nil, err
	}
	out := &payloadsResponse{Payloads: make([]SigningPayload, len(hashes))}
	for i, h := range hashes {
		out.Payloads[i] = SigningPayload{AccountIdentifier: &AccountIdentifier{Address: it.inputs[i].account},
			HexBytes: hex.EncodeToString(h), SignatureType: types[i]}
	}
	if out.UnsignedTransaction, err = blob.encode(tx); err != nil {
		return nil, err
	}
	return out, nil
}

type combineRequest struct {
	netRequest
	UnsignedTransaction string      `json:"unsigned_transaction"`
	Signatures          []Signature `json:"signatures"`
}

type combineResponse struct {
	SignedTransaction string `json:"signed_transaction"`
}

// constructionCombine puts each input's signature and key into its
// witness, after checking that the key is the one the input's output pays
// and that the signature is valid for the input's sighash.
func (s *Server) constructionCombine(_ context.Context, body []byte) (any, error) {
	var req combineRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	tx, blob, scripts, err := s.readBlob(req.UnsignedTransaction)
	if err != nil {
		return nil, err
	}
	if signed(tx) {
		return nil, fail(errBadTxBlob, "the transaction is already signed")
	}
	hashes, _, err := sighashes(tx, scripts, amountsOf(blob))
	if err != nil {
		return nil, err
	}
	if len(req.Signatures) != len(hashes) {
		return nil, fail(errBadSignature, "%d signatures for %d inputs", len(req.Signatures), len(hashes))
	}
	for i, h := range hashes {
		sig := findSignature(req.Signatures, h)
		if sig == nil {
			return nil, fail(errBadSignature, "no signature of input %d's payload", i)
		}
		w, err := witness(sig, h, scripts[i])
		if err != nil {
			return nil, fail(errBadSignature, "input %d: %v", i, err)
		}
		tx.TxIn[i].Witness = w
	}
	out, err := blob.encode(tx)
	if err != nil {
		return nil, err
	}
	return &combineResponse{SignedTransaction: out}, nil
}

func signed(tx *wire.MsgTx) bool {
	for _, in := range tx.TxIn {
		if len(in.Witness) > 0 || len(in.SignatureScript) > 0 {
			return true
		}
	}
	return false
}

func findSignature(sigs []Signature, hash []byte) *Signature {
	want := hex.EncodeToString(hash)
	for i := range sigs {
		if sigs[i].SigningPayload.HexBytes == want {
			return &sigs[i]
		}
	}
	return nil
}

// witness checks an ecdsa signature (r ‖ s, 64 bytes) by the key the
// P2WPKH script pays, and builds the input's witness: the DER signature
// with SIGHASH_ALL, and the key. P2TR inputs are taprootWitness's.
func witness(sig *Signature, hash, script []byte) (wire.TxWitness, error) {
	if bip352.IsP2TR(script) {
		return taprootWitness(sig, hash, script)
	}
	if sig.SignatureType != "ecdsa" {
		return nil, errors.New("signature type must be ecdsa")
	}
	key, raw, err := parsePublicKey(&sig.PublicKey)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(address.Hash160(raw), script[2:]) {
		return nil, errors.New("the key is not the one the spent output pays")
	}
	rs, err := hex.DecodeString(sig.HexBytes)
	if err != nil || len(rs) != 64 {
		return nil, errors.New("not 64 bytes (r ‖ s) in hex")
	}
	var r, sv btcec.ModNScalar
	if r.SetByteSlice(rs[:32]) || sv.SetByteSlice(rs[32:]) || r.IsZero() || sv.IsZero() {
		return nil, errors.New("r or s out of range")
	}
	e := ecdsa.NewSignature(&r, &sv)
	if !e.Verify(hash, key) {
		return nil, errors.New("the signature does not verify")
	}
	return wire.TxWitness{append(e.Serialize(), byte(txscript.SigHashAll)), raw}, nil
}

type parseRequest struct {
	netRequest
	Signed      *bool  `json:"signed"`
	Transaction string `json:"transaction"`
}

type parseResponse struct {
	Operations              []Operation         `json:"operations"`
	AccountIdentifierSigner []AccountIdentifier `json:"account_identifier_signers,omitempty"`
}

func (s *Server) constructionParse(_ context.Context, body []byte) (any, error) {
	var req parseRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	if req.Signed == nil {
		return nil, fail(errBadRequest, "signed is required")
	}
	tx, blob, _, err := s.readBlob(req.Transaction)
	if err != nil {
		return nil, err
	}
	if signed(tx) != *req.Signed {
		return nil, fail(errBadTxBlob, "signed is %v, the transaction is not", *req.Signed)
	}
	out := &parseResponse{Operations: s.intentOps(tx, blob)}
	if *req.Signed {
		seen := map[string]bool{}
		for _, in := range blob.Inputs {
			if !seen[in.Account] {
				seen[in.Account] = true
				out.AccountIdentifierSigner = append(out.AccountIdentifierSigner, AccountIdentifier{Address: in.Account})
			}
		}
	}
	return out, nil
}

type signedRequest struct {
	netRequest
	SignedTransaction string `json:"signed_transaction"`
}

type txIdentifierResponse struct {
	TransactionIdentifier TransactionIdentifier `json:"transaction_identifier"`
}

// readSigned reads a signed_transaction request.
func (s *Server) readSigned(body []byte) (*wire.MsgTx, error) {
	var req signedRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	tx, _, _, err := s.readBlob(req.SignedTransaction)
	if err != nil {
		return nil, err
	}
	if !signed(tx) {
		return nil, fail(errBadTxBlob, "the transaction is not signed")
	}
	return tx, nil
}

func (s *Server) constructionHash(_ context.Context, body []byte) (any, error) {
	tx, err := s.readSigned(body)
	if err != nil {
		return nil, err
	}
	return &txIdentifierResponse{TransactionIdentifier: TransactionIdentifier{Hash: tx.TxHash().String()}}, nil
}

// constructionSubmit is online: the node's sendrawtransaction.
func (s *Server) constructionSubmit(ctx context.Context, body []byte) (any, error) {
	tx, err := s.readSigned(body)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return nil, err
	}
	res, err := s.svc.SendTx(ctx, hex.EncodeToString(buf.Bytes()))
	if ue, ok := api.AsUserError(err); ok {
		return nil, failWith(errTxRejected, err, "%s", truncate(ue.Msg, 300))
	}
	if err != nil {
		return nil, err
	}
	return &txIdentifierResponse{TransactionIdentifier: TransactionIdentifier{Hash: res.Result}}, nil
}
