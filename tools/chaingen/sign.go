package chaingen

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

const (
	// txSequence opts into replace-by-fee like common wallets; the disable
	// bit keeps BIP68 relative locks off.
	txSequence = wire.MaxTxInSequenceNum - 2
	// dustLimit is the smallest change output worth creating; anything
	// smaller is left to the miner.
	dustLimit = 1000
)

var errInsufficient = errors.New("chaingen: insufficient funds")

func isInsufficient(err error) bool { return errors.Is(err, errInsufficient) }

// buildTx creates a signed tx spending ins to outs plus an optional change
// output. The fee is feeRate (sat/vB) times the vsize estimated with
// worst-case signature sizes, so it depends only on the tx's shape and is
// identical on every run. It returns the tx and its fee.
func buildTx(ins []*utxo, outs []*wire.TxOut, change *scriptInfo, feeRate int64) (*wire.MsgTx, int64, error) {
	tx := wire.NewMsgTx(2)
	var total, paid int64
	for _, u := range ins {
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: u.op, Sequence: txSequence})
		total += u.value
	}
	for _, o := range outs {
		tx.AddTxOut(o)
		paid += o.Value
	}
	if change != nil {
		tx.AddTxOut(&wire.TxOut{PkScript: change.pkScript})
	}
	fee := feeRate * estimateVSize(tx, ins)
	rest := total - paid - fee
	if rest < 0 {
		return nil, 0, fmt.Errorf("%w: inputs %d < outputs %d + fee %d", errInsufficient, total, paid, fee)
	}
	if change != nil {
		if rest >= dustLimit {
			tx.TxOut[len(tx.TxOut)-1].Value = rest
			rest = 0
		} else {
			tx.TxOut = tx.TxOut[:len(tx.TxOut)-1]
		}
	}
	if err := signTx(tx, ins); err != nil {
		return nil, 0, err
	}
	return tx, fee + rest, nil
}

var (
	maxECDSASig = make([]byte, 73) // longest DER signature plus sighash byte
	schnorrSig  = make([]byte, 64) // SigHashDefault has no sighash byte
)

// unlockTemplate returns unlocking data shaped like the real one for si,
// with worst-case signature sizes; only its length matters.
func unlockTemplate(si *scriptInfo) ([]byte, wire.TxWitness) {
	b := txscript.NewScriptBuilder()
	var witness wire.TxWitness
	switch si.ref.kind {
	case P2PKH:
		b.AddData(maxECDSASig).AddData(si.keys[0].pubC)
	case P2PK, P2PKUncompressed:
		b.AddData(maxECDSASig)
	case BareMultisig:
		b.AddOp(txscript.OP_0).AddData(maxECDSASig)
	case HashLock:
		b.AddData(si.preimage)
	case P2WPKH:
		witness = wire.TxWitness{maxECDSASig, si.keys[0].pubC}
	case P2SHP2WPKH:
		b.AddData(si.redeemScript)
		witness = wire.TxWitness{maxECDSASig, si.keys[0].pubC}
	case P2WSHMultisig:
		witness = wire.TxWitness{nil, maxECDSASig, maxECDSASig, si.witnessScript}
	case P2TR:
		witness = wire.TxWitness{schnorrSig}
	}
	script, _ := b.Script() // only fails for oversized scripts
	return script, witness
}

// estimateVSize returns the virtual size tx will have once ins are signed.
func estimateVSize(tx *wire.MsgTx, ins []*utxo) int64 {
	for i, u := range ins {
		tx.TxIn[i].SignatureScript, tx.TxIn[i].Witness = unlockTemplate(u.info)
	}
	stripped, full := int64(tx.SerializeSizeStripped()), int64(tx.SerializeSize())
	for _, in := range tx.TxIn {
		in.SignatureScript, in.Witness = nil, nil
	}
	return (stripped*3 + full + 3) / 4
}

// signTx fills in the unlocking data for every input. One TxSigHashes per
// tx caches the BIP143/BIP341 midstates across all its segwit inputs.
func signTx(tx *wire.MsgTx, ins []*utxo) error {
	var s sigContext
	for _, u := range ins {
		if u.info.ref.kind.segwit() {
			prevs := make(map[wire.OutPoint]*wire.TxOut, len(ins))
			for _, p := range ins {
				prevs[p.op] = &wire.TxOut{Value: p.value, PkScript: p.info.pkScript}
			}
			s.prevs = txscript.NewMultiPrevOutFetcher(prevs)
			s.hashes = txscript.NewTxSigHashes(tx, s.prevs)
			break
		}
	}
	for i, u := range ins {
		if err := s.signInput(tx, i, u); err != nil {
			return fmt.Errorf("chaingen: sign input %d (%v): %w", i, u.info.ref.kind, err)
		}
	}
	return nil
}

// sigContext holds the per-tx segwit signing state.
type sigContext struct {
	hashes *txscript.TxSigHashes
	prevs  txscript.PrevOutputFetcher
}

func (s *sigContext) signInput(tx *wire.MsgTx, i int, u *utxo) error {
	si, in, hashes := u.info, tx.TxIn[i], s.hashes
	var err error
	switch si.ref.kind {
	case P2PKH:
		in.SignatureScript, err = txscript.SignatureScript(tx, i, si.pkScript,
			txscript.SigHashAll, si.keys[0].priv, true)
	case P2PK, P2PKUncompressed:
		var sig []byte
		if sig, err = txscript.RawTxInSignature(tx, i, si.pkScript, txscript.SigHashAll, si.keys[0].priv); err == nil {
			in.SignatureScript, err = txscript.NewScriptBuilder().AddData(sig).Script()
		}
	case BareMultisig:
		var sig []byte
		if sig, err = txscript.RawTxInSignature(tx, i, si.pkScript, txscript.SigHashAll, si.keys[0].priv); err == nil {
			// OP_0 is the dummy element CHECKMULTISIG pops (must be empty).
			in.SignatureScript, err = txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(sig).Script()
		}
	case HashLock:
		in.SignatureScript, err = txscript.NewScriptBuilder().AddData(si.preimage).Script()
	case P2WPKH:
		in.Witness, err = txscript.WitnessSignature(tx, hashes, i, u.value, si.pkScript,
			txscript.SigHashAll, si.keys[0].priv, true)
	case P2SHP2WPKH:
		if in.Witness, err = txscript.WitnessSignature(tx, hashes, i, u.value, si.redeemScript,
			txscript.SigHashAll, si.keys[0].priv, true); err == nil {
			in.SignatureScript, err = txscript.NewScriptBuilder().AddData(si.redeemScript).Script()
		}
	case P2WSHMultisig:
		w := wire.TxWitness{nil} // CHECKMULTISIG dummy
		for _, k := range si.keys {
			sig, err := txscript.RawTxInWitnessSignature(tx, hashes, i, u.value,
				si.witnessScript, txscript.SigHashAll, k.priv)
			if err != nil {
				return err
			}
			w = append(w, sig)
		}
		w = append(w, si.witnessScript)
		in.Witness = w
	case P2TR:
		// Equivalent to txscript.TaprootWitnessSignature, but with the
		// pre-tweaked key and without the redundant self-verification;
		// the node verifies every signature anyway.
		var hash []byte
		if hash, err = txscript.CalcTaprootSignatureHash(hashes, txscript.SigHashDefault, tx, i, s.prevs); err == nil {
			var sig *schnorr.Signature
			if sig, err = schnorr.Sign(si.tapKey, hash, schnorr.FastSign()); err == nil {
				in.Witness = wire.TxWitness{sig.Serialize()}
			}
		}
	default:
		err = fmt.Errorf("cannot spend %v", si.ref.kind)
	}
	return err
}
