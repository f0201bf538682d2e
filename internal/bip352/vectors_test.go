package bip352

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
)

// The BIP's own vectors (bip-0352/send_and_receive_test_vectors.json in
// the BIPs repository, committed as it is published).
type vectorCase struct {
	Comment   string `json:"comment"`
	Receiving []struct {
		Given struct {
			Vin         []vectorVin `json:"vin"`
			Outputs     []string    `json:"outputs"`
			KeyMaterial struct {
				Spend string `json:"spend_priv_key"`
				Scan  string `json:"scan_priv_key"`
			} `json:"key_material"`
			Labels []uint32 `json:"labels"`
		} `json:"given"`
		Expected struct {
			Addresses []string `json:"addresses"`
			Tweak     *string  `json:"tweak"`
			Outputs   []struct {
				PubKey   string `json:"pub_key"`
				PrivTwk  string `json:"priv_key_tweak"`
				Sig      string `json:"signature"`
				Labelled bool
			} `json:"outputs"`
			NOutputs *int `json:"n_outputs"`
		} `json:"expected"`
	} `json:"receiving"`
	Sending []struct {
		Given struct {
			Vin        []vectorVin `json:"vin"`
			Recipients []struct {
				Scan  string `json:"scan_pub_key"`
				Spend string `json:"spend_pub_key"`
				Count int    `json:"count"`
			} `json:"recipients"`
		} `json:"given"`
		Expected struct {
			Outputs [][]string `json:"outputs"`
		} `json:"expected"`
	} `json:"sending"`
}

type vectorVin struct {
	Txid      string `json:"txid"`
	Vout      uint32 `json:"vout"`
	ScriptSig string `json:"scriptSig"`
	Witness   string `json:"txinwitness"`
	Prevout   struct {
		ScriptPubKey struct {
			Hex string `json:"hex"`
		} `json:"scriptPubKey"`
	} `json:"prevout"`
	PrivKey string `json:"private_key"`
}

func loadVectors(t testing.TB) []vectorCase {
	t.Helper()
	b, err := os.ReadFile("testdata/send_and_receive_test_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []vectorCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseWitness reads a serialized witness stack (count, then items).
func parseWitness(b []byte) ([][]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r := bytes.NewReader(b)
	readSize := func() (uint64, error) {
		first, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch first {
		case 0xfd:
			var v uint16
			err = binary.Read(r, binary.LittleEndian, &v)
			return uint64(v), err
		case 0xfe:
			var v uint32
			err = binary.Read(r, binary.LittleEndian, &v)
			return uint64(v), err
		case 0xff:
			var v uint64
			err = binary.Read(r, binary.LittleEndian, &v)
			return v, err
		}
		return uint64(first), nil
	}
	n, err := readSize()
	if err != nil {
		return nil, err
	}
	var stack [][]byte
	for range n {
		l, err := readSize()
		if err != nil || l > uint64(r.Len()) {
			return nil, fmt.Errorf("witness item: %v", err)
		}
		item := make([]byte, l)
		_, _ = r.Read(item)
		stack = append(stack, item)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing witness bytes", r.Len())
	}
	return stack, nil
}

func vectorInputs(t testing.TB, vins []vectorVin) []Input {
	t.Helper()
	ins := make([]Input, len(vins))
	for i, v := range vins {
		w, err := parseWitness(unhex(t, v.Witness))
		if err != nil {
			t.Fatal(err)
		}
		copy(ins[i].PrevTxid[:], unhex(t, v.Txid))
		ins[i].PrevVout = v.Vout
		ins[i].ScriptSig = unhex(t, v.ScriptSig)
		ins[i].Witness = w
		ins[i].PrevScript = unhex(t, v.Prevout.ScriptPubKey.Hex)
	}
	return ins
}

// TestVectorsReceiving: every receiving case gives the BIP's tweak (or
// none where the BIP skips the tx), and a scanner with the case's scan
// key, spend key and labels finds exactly the BIP's outputs with their
// private key tweaks.
func TestVectorsReceiving(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t) {
		for ri, r := range c.Receiving {
			n++
			t.Run(fmt.Sprintf("%s/%d", c.Comment, ri), func(t *testing.T) {
				tweak, ok := Tweak(vectorInputs(t, r.Given.Vin))
				if r.Expected.Tweak == nil {
					if ok {
						t.Fatalf("tweak %x for a tx the BIP skips", tweak)
					}
					return
				}
				if !ok || hex.EncodeToString(tweak[:]) != *r.Expected.Tweak {
					t.Fatalf("tweak %x (ok %v), want %s", tweak, ok, *r.Expected.Tweak)
				}
				spend, _ := btcec.PrivKeyFromBytes(unhex(t, r.Given.KeyMaterial.Spend))
				s, err := NewScanner(unhex(t, r.Given.KeyMaterial.Scan), spend.PubKey().SerializeCompressed(), r.Given.Labels)
				if err != nil {
					t.Fatal(err)
				}
				outs := make([][32]byte, len(r.Given.Outputs))
				for i, o := range r.Given.Outputs {
					copy(outs[i][:], unhex(t, o))
				}
				found, err := s.Scan(tweak[:], outs)
				if err != nil {
					t.Fatal(err)
				}
				if r.Expected.NOutputs != nil {
					if len(found) != *r.Expected.NOutputs {
						t.Fatalf("found %d outputs, want %d", len(found), *r.Expected.NOutputs)
					}
					return
				}
				var got, want []string
				for _, m := range found {
					got = append(got, fmt.Sprintf("%x/%x", m.Output, m.KeyTwk))
				}
				for _, o := range r.Expected.Outputs {
					want = append(want, o.PubKey+"/"+o.PrivTwk)
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("found %v, want %v", got, want)
				}
			})
		}
	}
	if n < 25 {
		t.Fatalf("only %d receiving cases read", n)
	}
}

// TestVectorsSending: the sender's side (used by the test chains) makes
// one of the BIP's output sets.
func TestVectorsSending(t *testing.T) {
	for _, c := range loadVectors(t) {
		for si, s := range c.Sending {
			t.Run(fmt.Sprintf("%s/%d", c.Comment, si), func(t *testing.T) {
				ins := vectorInputs(t, s.Given.Vin)
				send := make([]SendInput, len(ins))
				eligible := 0
				for i := range ins {
					send[i] = SendInput{PrevTxid: ins[i].PrevTxid, PrevVout: ins[i].PrevVout}
					if InputKey(&ins[i]) != nil {
						send[i].Key, _ = btcec.PrivKeyFromBytes(unhex(t, s.Given.Vin[i].PrivKey))
						send[i].Taproot = IsP2TR(ins[i].PrevScript)
						eligible++
					}
				}
				var rcpts []Recipient
				for _, r := range s.Given.Recipients {
					for range max(r.Count, 1) {
						rcpts = append(rcpts, Recipient{Scan: unhex(t, r.Scan), Spend: unhex(t, r.Spend)})
					}
				}
				outs, err := SendOutputs(send, rcpts)
				if err != nil {
					// The BIP's sender fails too: no eligible input, keys
					// summing to zero, more than K_max recipients in a group.
					if len(s.Expected.Outputs) == 1 && len(s.Expected.Outputs[0]) == 0 {
						return
					}
					t.Fatal(err)
				}
				if eligible == 0 {
					t.Fatal("outputs without an eligible input")
				}
				var got []string
				for _, o := range outs {
					got = append(got, hex.EncodeToString(o[:]))
				}
				slices.Sort(got)
				for _, set := range s.Expected.Outputs {
					want := slices.Clone(set)
					slices.Sort(want)
					if slices.Equal(got, want) {
						return
					}
				}
				t.Fatalf("outputs %v match none of %v", got, s.Expected.Outputs)
			})
		}
	}
}
