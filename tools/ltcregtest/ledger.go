package ltcregtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The ledger of a litecoind chain is computed from litecoind's own JSON
// decoding of its blocks (getblock verbosity 2): the canonical txs as
// Litecoin Core shows them to a wallet that does not use MWEB, the HogEx
// included, its peg-in and HogAddr outputs having no address. MWEB-only
// transactions are not in that list and touch no address. The rules of
// order are those of chaingen.Ledger (Blockbook's).

// Block is what the ledger walk learned about one block.
type Block struct {
	Height int32
	Hash   string
	NTx    int      // litecoind's nTx (canonical txs, the HogEx included)
	Txids  []string // in block order
	// MWEB is set when the block carries an MWEB extension block; HogEx is
	// then the txid of its last tx.
	MWEB  bool
	HogEx string
	// PegIns and PegOuts count the canonical outputs that enter MWEB (peg-in
	// outputs of ordinary txs) and leave it (HogEx outputs after the first).
	PegIns, PegOuts int
}

type vjsonBlock struct {
	Hash   string          `json:"hash"`
	Height int32           `json:"height"`
	NTx    int             `json:"nTx"`
	Tx     []vjsonTx       `json:"tx"`
	MWEB   json.RawMessage `json:"mweb"`
}

type vjsonTx struct {
	Txid string `json:"txid"`
	Vin  []struct {
		Coinbase string `json:"coinbase"`
		Txid     string `json:"txid"`
		Vout     uint32 `json:"vout"`
		IsMWEB   bool   `json:"ismweb"`
	} `json:"vin"`
	Vout []struct {
		Value        json.Number `json:"value"`
		N            uint32      `json:"n"`
		ScriptPubKey struct {
			Type      string   `json:"type"`
			Addresses []string `json:"addresses"`
			Address   string   `json:"address"`
		} `json:"scriptPubKey"`
	} `json:"vout"`
}

// Ledger walks the node's active chain from height 1 to its tip and
// returns the ledger an explorer must show, and the blocks it saw.
func Ledger(ctx context.Context, n *Node) (*chaingen.Ledger, []Block, error) {
	tip, _, err := n.BestBlock(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("ltcregtest: ledger: %w", err)
	}
	r := &replay{utxos: map[string]ledgerOut{}, l: &chaingen.Ledger{
		Addresses: map[string]*chaingen.AddressLedger{}, Txs: map[string]chaingen.TxInfo{}}}
	blocks := make([]Block, 0, tip)
	for h := int32(1); h <= tip; h++ {
		b, err := n.verboseBlock(ctx, h)
		if err != nil {
			return nil, nil, err
		}
		info := Block{Height: h, Hash: b.Hash, NTx: b.NTx, MWEB: len(b.MWEB) > 0 && string(b.MWEB) != "null"}
		for pos := range b.Tx {
			tx := &b.Tx[pos]
			info.Txids = append(info.Txids, tx.Txid)
			if err := r.applyTx(h, pos, tx, &info); err != nil {
				return nil, nil, fmt.Errorf("ltcregtest: block %d: %w", h, err)
			}
		}
		if info.MWEB && len(b.Tx) > 0 {
			info.HogEx = b.Tx[len(b.Tx)-1].Txid
			info.PegOuts = len(b.Tx[len(b.Tx)-1].Vout) - 1
		}
		blocks = append(blocks, info)
		r.l.TipHeight, r.l.TipHash = h, b.Hash
	}
	if err := r.placeUtxos(); err != nil {
		return nil, nil, err
	}
	return r.l, blocks, nil
}

func (n *Node) verboseBlock(ctx context.Context, h int32) (*vjsonBlock, error) {
	hash, err := n.BlockHash(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("ltcregtest: block hash %d: %w", h, err)
	}
	raw, err := n.Call(ctx, "getblock", hash, 2)
	if err != nil {
		return nil, fmt.Errorf("ltcregtest: getblock %s: %w", hash, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // amounts are decimal LTC: no float rounding
	var b vjsonBlock
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("ltcregtest: decode block %d: %w", h, err)
	}
	return &b, nil
}

// Satoshis converts a decimal amount with at most 8 decimals exactly.
func Satoshis(v json.Number) (int64, error) {
	s := string(v)
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 8 || whole == "" || strings.HasPrefix(whole, "-") {
		return 0, fmt.Errorf("ltcregtest: bad amount %q", s)
	}
	frac += strings.Repeat("0", 8-len(frac))
	var sat int64
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("ltcregtest: bad amount %q", s)
		}
		sat = sat*10 + int64(c-'0')
	}
	return sat, nil
}

// explorerAddress is the address an explorer shows for an output as
// litecoind decodes it: P2PK is credited to the key's P2PKH address (which
// litecoind lists), bare multisig, OP_RETURN, peg-in, HogAddr and
// non-standard outputs have none.
func explorerAddress(typ string, addresses []string, address string) string {
	switch typ {
	case "pubkey", "pubkeyhash", "scripthash", "witness_v0_keyhash", "witness_v0_scripthash", "witness_v1_taproot":
		if address != "" {
			return address
		}
		if len(addresses) == 1 {
			return addresses[0]
		}
	}
	return ""
}

type ledgerOut struct {
	addr     string
	value    int64
	height   int32
	position int
	coinbase bool
}

type replay struct {
	l     *chaingen.Ledger
	utxos map[string]ledgerOut // "txid:vout"
}

func (r *replay) touch(addr, txid string, spends bool) *chaingen.AddressLedger {
	a := r.l.Addresses[addr]
	if a == nil {
		a = &chaingen.AddressLedger{Spends: map[string]bool{}, Pays: map[string]bool{}}
		r.l.Addresses[addr] = a
	}
	if spends {
		a.Spends[txid] = true
	} else {
		a.Pays[txid] = true
	}
	if k := len(a.Txids); k == 0 || a.Txids[k-1] != txid {
		a.Txids = append(a.Txids, txid)
	}
	return a
}

func (r *replay) applyTx(h int32, pos int, tx *vjsonTx, info *Block) error {
	var in, out int64
	coinbase := pos == 0
	for _, vin := range tx.Vin {
		if vin.Coinbase != "" {
			continue
		}
		if vin.IsMWEB {
			return fmt.Errorf("tx %s: canonical tx with an MWEB input", tx.Txid)
		}
		key := fmt.Sprintf("%s:%d", vin.Txid, vin.Vout)
		o, ok := r.utxos[key]
		if !ok {
			return fmt.Errorf("tx %s spends unknown output %s", tx.Txid, key)
		}
		delete(r.utxos, key)
		in += o.value
		if o.addr == "" {
			r.l.NoAddress.Spent++
			r.l.NoAddress.Sent += o.value
			continue
		}
		r.touch(o.addr, tx.Txid, true).Sent += o.value
	}
	for _, vout := range tx.Vout {
		v, err := Satoshis(vout.Value)
		if err != nil {
			return err
		}
		out += v
		spk := vout.ScriptPubKey
		if spk.Type == "witness_mweb_pegin" {
			info.PegIns++
		}
		addr := explorerAddress(spk.Type, spk.Addresses, spk.Address)
		if addr == "" {
			r.l.NoAddress.Outputs++
			r.l.NoAddress.Received += v
		} else {
			r.touch(addr, tx.Txid, false).Received += v
		}
		if spk.Type == "nulldata" {
			r.l.NoAddress.Burned += v
			continue
		}
		r.utxos[fmt.Sprintf("%s:%d", tx.Txid, vout.N)] = ledgerOut{
			addr: addr, value: v, height: h, position: pos, coinbase: coinbase}
	}
	ti := chaingen.TxInfo{Height: h, Position: pos}
	if !coinbase {
		ti.Fee = in - out
	}
	r.l.Txs[tx.Txid] = ti
	return nil
}

// placeUtxos gives every address its unspent outputs and tx order (see
// chaingen.AddressLedger) and checks that they add up to its balance.
func (r *replay) placeUtxos() error {
	type placed struct {
		chaingen.Utxo
		position int
	}
	unspent := map[string][]placed{}
	for key, o := range r.utxos {
		if o.addr == "" {
			r.l.NoAddress.Balance += o.value
			continue
		}
		txid, vout, _ := strings.Cut(key, ":")
		var n uint32
		if _, err := fmt.Sscan(vout, &n); err != nil {
			return fmt.Errorf("ltcregtest: outpoint %s: %w", key, err)
		}
		unspent[o.addr] = append(unspent[o.addr], placed{chaingen.Utxo{Txid: txid, Vout: n,
			Value: o.value, Height: o.height, Coinbase: o.coinbase}, o.position})
	}
	for addr, a := range r.l.Addresses {
		slices.SortStableFunc(a.Txids, func(x, y string) int {
			tx, ty := r.l.Txs[x], r.l.Txs[y]
			if c := cmp.Compare(ty.Height, tx.Height); c != 0 {
				return c
			}
			// Blockbook's order in a block: spend-only txs, then paying
			// ones, each newest first (chaingen.AddressLedger.Txids).
			if px, py := a.Pays[x], a.Pays[y]; px != py {
				if py {
					return -1
				}
				return 1
			}
			return cmp.Compare(ty.Position, tx.Position)
		})
		us := unspent[addr]
		slices.SortFunc(us, func(x, y placed) int {
			if c := cmp.Compare(y.Height, x.Height); c != 0 {
				return c
			}
			if c := cmp.Compare(y.position, x.position); c != 0 {
				return c
			}
			return cmp.Compare(y.Vout, x.Vout)
		})
		var sum int64
		for _, u := range us {
			a.Utxos = append(a.Utxos, u.Utxo)
			sum += u.Value
		}
		a.Balance = a.Received - a.Sent
		if sum != a.Balance {
			return fmt.Errorf("ltcregtest: %s: utxos sum %d != balance %d", addr, sum, a.Balance)
		}
	}
	return nil
}
