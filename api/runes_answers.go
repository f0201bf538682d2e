package api

// runes_answers.go: the runes=true additions to address, account, UTXO
// and tx answers, read from the Runes index in the answer's own view.

import (
	"bytes"
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/mempool"
)

// RuneBalance is an amount of one rune an address or output holds, in
// atomic units.
type RuneBalance struct {
	ID           string `json:"id"`
	SpacedName   string `json:"spacedName"`
	Amount       string `json:"amount"`
	Divisibility uint8  `json:"divisibility"`
	Symbol       string `json:"symbol,omitempty"`
}

// TxWithRunes is Tx with runes=true: each input's and output's runes.
func (s *UtxoService) TxWithRunes(ctx context.Context, txid string) (*Tx, error) {
	return s.tx(ctx, txid, true)
}

// UtxosWithRunes is Utxos with runes=true: each output's runes.
func (s *UtxoService) UtxosWithRunes(ctx context.Context, descriptor string, onlyConfirmed bool, gap int) ([]Utxo, error) {
	return s.utxos(ctx, descriptor, onlyConfirmed, gap, true)
}

func runesOn(r db.Reader) error {
	if on, err := db.OptionalMarked(r, runes.Name); err != nil {
		return err
	} else if !on {
		return errRunesOff
	}
	return nil
}

// runeNames turns balances into answers, reading each rune's entry once.
type runeNames struct {
	r       db.Reader
	entries map[runes.RuneID]*runes.Entry
}

// entry reads a held rune's entry (a held rune is always etched).
func (n *runeNames) entry(id runes.RuneID) (*runes.Entry, error) {
	if e := n.entries[id]; e != nil {
		return e, nil
	}
	e, err := runes.ReadEntry(n.r, id)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("%w: rune %s held but not etched", db.ErrCorrupt, id)
	}
	if n.entries == nil {
		n.entries = map[runes.RuneID]*runes.Entry{}
	}
	n.entries[id] = e
	return e, nil
}

func (n *runeNames) balances(bal []runes.Balance) ([]RuneBalance, error) {
	out := make([]RuneBalance, 0, len(bal))
	for _, b := range bal {
		e, err := n.entry(b.ID)
		if err != nil {
			return nil, err
		}
		info := runeInfo(e)
		out = append(out, RuneBalance{ID: info.ID, SpacedName: info.SpacedName, Amount: b.Amount.String(),
			Divisibility: e.Divisibility, Symbol: info.Symbol})
	}
	return out, nil
}

// addressRunes reads an address's rune balances for runes=true.
func addressRunes(r db.Reader, desc []byte) (*[]RuneBalance, error) {
	if err := runesOn(r); err != nil {
		return nil, err
	}
	bal, err := runes.ReadAddress(r, desc)
	if err != nil {
		return nil, err
	}
	out, err := (&runeNames{r: r}).balances(bal)
	return &out, err
}

// sumRunes adds balances into sums by rune.
func sumRunes(into map[runes.RuneID]runes.U128, bal []runes.Balance) error {
	for _, b := range bal {
		t, ok := into[b.ID].Add(b.Amount)
		if !ok {
			return fmt.Errorf("%w: rune %s amounts pass 2^128", db.ErrCorrupt, b.ID)
		}
		into[b.ID] = t
	}
	return nil
}

// accountRunes sums the rune balances of an account's used addresses.
func accountRunes(r db.Reader, a *xpubAccount) (*[]RuneBalance, error) {
	if err := runesOn(r); err != nil {
		return nil, err
	}
	sum := map[runes.RuneID]runes.U128{}
	err := a.usedAddrs(func(ad *xpubAddr) error {
		bal, err := runes.ReadAddress(r, ad.desc)
		if err != nil {
			return err
		}
		return sumRunes(sum, bal)
	})
	if err != nil {
		return nil, err
	}
	list := make([]runes.Balance, 0, len(sum))
	for id, v := range sum {
		list = append(list, runes.Balance{ID: id, Amount: v})
	}
	runes.SortBalances(list)
	out, err := (&runeNames{r: r}).balances(list)
	return &out, err
}

// utxoRunes adds each output's runes: a confirmed one's from the index,
// a pending one's as its tx would give them if mined next.
func (s *UtxoService) utxoRunes(v *view, us []Utxo) error {
	r := v.snap
	if err := runesOn(r); err != nil {
		return err
	}
	names := &runeNames{r: r}
	var pr *pendingRunes
	for i := range us {
		u := &us[i]
		txid, err := bchain.ParseHash(u.Txid)
		if err != nil {
			return err
		}
		if u.Height <= 0 {
			mtx := s.mempoolTx(txid)
			if mtx == nil {
				continue // left the mempool since the list was read
			}
			if pr == nil {
				pr = s.pendingRunes(v)
			}
			m, err := pr.of(mtx)
			if err != nil {
				return err
			}
			if u.Runes, err = names.balances(m.outs[u.Vout]); err != nil {
				return err
			}
			continue
		}
		ta, err := db.ReadTxOutputs(r, txid) // its position only
		if err != nil {
			return err
		}
		if ta == nil { // listed as confirmed in this very snapshot
			return fmt.Errorf("%w: confirmed UTXO %s:%d has no tx row", db.ErrCorrupt, u.Txid, u.Vout)
		}
		bal, err := runes.ReadOutput(r, runes.Pos{Height: ta.Height, Index: ta.Index, Vout: u.Vout})
		if err != nil {
			return err
		}
		if u.Runes, err = names.balances(bal); err != nil {
			return err
		}
	}
	return nil
}

// txRunes adds a confirmed tx's runes: what each output received, what
// each input's output had received, and what the tx burned. The index
// keeps runes (runesOn).
func txRunes(names *runeNames, tx *Tx, ta *db.TxAddresses) error {
	r := names.r
	outs, burned, _, err := runes.ReadTx(r, ta.Height, ta.Index)
	if err != nil {
		return err
	}
	for _, o := range outs {
		if int(o.Vout) >= len(tx.Vout) {
			return fmt.Errorf("%w: runes of output %d of tx %s", db.ErrCorrupt, o.Vout, tx.Txid)
		}
		if tx.Vout[o.Vout].Runes, err = names.balances(o.Balances); err != nil {
			return err
		}
	}
	if tx.RunesBurned, err = names.balances(burned); err != nil {
		return err
	}
	for i, p := range ta.Prevouts {
		if ta.Coinbase || i >= len(tx.Vin) {
			break
		}
		outs, _, ok, err := runes.ReadTx(r, p.Height, p.Index)
		if err != nil {
			return err
		}
		for _, o := range outs {
			if ok && o.Vout == p.Vout {
				if tx.Vin[i].Runes, err = names.balances(o.Balances); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// RuneHistory is the page of txs that moved an address's runes, newest
// first (details=txids, the default), or the txs themselves with their
// runes (details=txs); Txs counts the confirmed ones, UnconfirmedTxs the
// pending ones, listed first on the first page as address answers do.
type RuneHistory struct {
	Paging
	Address        string   `json:"address"`
	Txs            int      `json:"txs"`
	UnconfirmedTxs int      `json:"unconfirmedTxs,omitempty"`
	Txids          []string `json:"txids,omitempty"`
	Transactions   []*Tx    `json:"transactions,omitempty"`
}

// RuneHistory answers /api/v2/rune-history/<address>: page and pageSize
// as on address answers. The page is read in the same pass that counts
// the address's rows.
func (s *UtxoService) RuneHistory(ctx context.Context, address string, q AddressQuery) (*RuneHistory, error) {
	desc, err := s.addrDesc(address)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if err := runesOn(v.snap); err != nil {
		return nil, err
	}
	if canonical, ok := s.DescAddress(desc); ok {
		address = canonical
	}
	_, size, _ := clampPaging(1, q.PageSize, 0, s.cfg.Limits.MaxPageSize)
	want := s.capDepth(max(q.Page, 1), size)
	read := size
	if q.Details < DetailsTxids {
		read = 0
	}
	pos, total, err := runes.ReadHistoryPage(v.snap, desc, want, read)
	if err != nil {
		return nil, err
	}
	page, size, pages := clampPaging(want, size, total, s.cfg.Limits.MaxPageSize)
	out := &RuneHistory{Paging: Paging{Page: page, TotalPages: pages, ItemsOnPage: size}, Address: address, Txs: total}
	pr := s.pendingRunes(v)
	pending, err := s.pendingRuneTxs(v, pr, desc)
	if err != nil {
		return nil, err
	}
	out.UnconfirmedTxs = len(pending)
	if q.Details < DetailsTxids {
		return out, nil
	}
	if page > 1 {
		pending = nil
	}
	txids, err := db.ReadTxidsAt(v.snap, pos)
	if err != nil {
		return nil, err
	}
	if q.Details == DetailsTxids {
		out.Txids = make([]string, 0, len(pending)+len(txids))
		for _, p := range pending {
			out.Txids = append(out.Txids, p.Txid.String())
		}
		for _, t := range txids {
			out.Txids = append(out.Txids, t.String())
		}
		return out, nil
	}
	names := &runeNames{r: v.snap}
	for _, p := range pending {
		tx, err := s.renderTx(ctx, v, p.Tx, txRecord{mtx: p}, true)
		if err != nil {
			return nil, err
		}
		if err := pr.pendingTxRunes(names, tx, p); err != nil {
			return nil, err
		}
		out.Transactions = append(out.Transactions, tx)
	}
	txs, err := s.renderTxs(ctx, v, txids, true) // with the rows it read
	if err != nil {
		return nil, err
	}
	out.Transactions = append(out.Transactions, txs...)
	return out, nil
}

// pendingRuneTxs are the pending txs that move desc's runes, newest first.
func (s *UtxoService) pendingRuneTxs(v *view, pr *pendingRunes, desc bchain.AddrDesc) ([]*mempool.Tx, error) {
	pending, err := s.pendingTxs(v, desc)
	if err != nil {
		return nil, err
	}
	own := func(d bchain.AddrDesc) bool { return bytes.Equal(d, desc) }
	var out []*mempool.Tx
	for _, p := range pending {
		moved, err := pr.movesRunes(p.tx, own)
		if err != nil {
			return nil, err
		}
		if moved {
			out = append(out, p.tx)
		}
	}
	return out, nil
}
