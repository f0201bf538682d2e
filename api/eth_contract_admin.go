package api

// The data side of /admin/contract-info/ and /admin/internal-data-errors:
// operators' fixes of token metadata (db/contract_fix.go) and the blocks
// whose trace failed. The admin routes of the internal server translate
// these into Blockbook's wire shapes.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// ContractFixStore is what the admin's metadata fixes need of the index.
type ContractFixStore interface {
	Snapshot() (*db.Snapshot, error)
	WriteContractFixes(contracts []bchain.AddrDesc, fixes []db.ContractFix) error
	DeleteContractFix(contract bchain.AddrDesc) (*db.ContractFix, error)
}

// AdminContractInfo is Blockbook's stored contract record (its
// bchain.ContractInfo): the admin's read and write shape.
type AdminContractInfo struct {
	Type              string `json:"type"`
	Standard          string `json:"standard"`
	Contract          string `json:"contract"`
	Name              string `json:"name"`
	Symbol            string `json:"symbol"`
	Decimals          int    `json:"decimals"`
	CreatedInBlock    uint32 `json:"createdInBlock,omitempty"`
	DestructedInBlock uint32 `json:"destructedInBlock,omitempty"`
}

// InternalDataError is a block indexed without its internal transfers
// because its trace failed (Blockbook's BlockInternalDataError).
type InternalDataError struct {
	Height       uint32 `json:"height"`
	Hash         string `json:"hash"`
	ErrorMessage string `json:"errorMessage"`
}

// ContractAdmin reads and fixes contract metadata for the admin.
type ContractAdmin struct {
	s  *EthService
	st ContractFixStore
}

// NewContractAdmin returns the admin's contract metadata service over s's
// index, written through st.
func NewContractAdmin(s *EthService, st ContractFixStore) *ContractAdmin {
	return &ContractAdmin{s: s, st: st}
}

// MaxContractText bounds a fixed name or symbol (as the index stores them).
const MaxContractText = 256

func (a *ContractAdmin) render(desc bchain.AddrDesc, ci *db.ContractInfo) AdminContractInfo {
	std := a.s.standard(ci.Standard())
	created, destroyed := ci.Lifetime()
	return AdminContractInfo{Type: std, Standard: std, Contract: a.s.addr(desc), Name: ci.Name, Symbol: ci.Symbol,
		Decimals: int(ci.Decimals), CreatedInBlock: created, DestructedInBlock: destroyed}
}

// contract parses a contract address, with Blockbook's text.
func (a *ContractAdmin) contract(address string) (bchain.AddrDesc, error) {
	address = strings.TrimSpace(address)
	if address == "" {
		return nil, userErr("Missing contract address")
	}
	desc, err := a.s.addrs.AddrDescFromAddress(address)
	if err != nil || len(desc) != db.EthAddrLen {
		return nil, &Error{Msg: "Invalid contract address " + address, Err: err}
	}
	return desc, nil
}

// List answers one page of the contracts the index holds (rows and
// fixes), from the address `from` on, and the next page's `from`.
func (a *ContractAdmin) List(from string, limit int) ([]AdminContractInfo, string, error) {
	var start bchain.AddrDesc
	if from != "" {
		var err error
		if start, err = a.contract(from); err != nil {
			return nil, "", err
		}
	}
	snap, err := a.st.Snapshot()
	if err != nil {
		return nil, "", err
	}
	defer snap.Release()
	rows, next, err := db.ListContracts(snap, start, limit)
	if err != nil {
		return nil, "", err
	}
	out := make([]AdminContractInfo, len(rows))
	for i, r := range rows {
		out[i] = a.render(r.Contract, r.Info)
	}
	nextAddr := ""
	if next != nil {
		nextAddr = a.s.addr(next)
	}
	return out, nextAddr, nil
}

// Get answers what the index knows of a contract, fix included; for a
// contract it never met, the node's metadata (not stored).
func (a *ContractAdmin) Get(ctx context.Context, address string) (*AdminContractInfo, error) {
	desc, err := a.contract(address)
	if err != nil {
		return nil, err
	}
	snap, err := a.st.Snapshot()
	if err != nil {
		return nil, err
	}
	ci, err := db.ReadContractInfo(snap, desc)
	snap.Release()
	if err != nil {
		return nil, err
	}
	if ci != nil {
		out := a.render(desc, ci)
		return &out, nil
	}
	info, err := a.s.eth.ContractInfo(ctx, desc)
	if err != nil {
		return nil, err
	}
	if info == nil || info.Name == "" && info.Symbol == "" && info.Decimals == 0 {
		return nil, &Error{Msg: "Not a contract", Err: ErrNotFound}
	}
	std := a.s.standard(info.Standard)
	return &AdminContractInfo{Type: std, Standard: std, Contract: a.s.addr(desc), Name: info.Name, Symbol: info.Symbol, Decimals: info.Decimals}, nil
}

// parseStandard reads a standard as this chain's answers name it ("": the
// index's own).
func (a *ContractAdmin) parseStandard(name string) (bchain.TokenStandard, error) {
	for t := bchain.TokenUnknown; t <= bchain.TokenERC1155; t++ {
		if strings.EqualFold(name, a.s.standard(t)) {
			return t, nil
		}
	}
	return 0, userErr("Unknown token standard %q", name)
}

// Update stores the metadata of the given contracts as operators' fixes
// (name, symbol, decimals and, when given, the standard; the heights stay
// the index's own, from the chain), all or none.
func (a *ContractAdmin) Update(infos []AdminContractInfo) (int, error) {
	descs := make([]bchain.AddrDesc, len(infos))
	fixes := make([]db.ContractFix, len(infos))
	for i := range infos {
		c := &infos[i]
		desc, err := a.contract(c.Contract)
		if err != nil {
			return 0, err
		}
		std, err := a.parseStandard(cmpOr(c.Standard, c.Type))
		if err != nil {
			return 0, err
		}
		if c.Decimals < 0 || c.Decimals > 255 {
			return 0, userErr("Error updating contract %s: decimals %d out of 0..255", c.Contract, c.Decimals)
		}
		if len(c.Name) > MaxContractText || len(c.Symbol) > MaxContractText {
			return 0, userErr("Error updating contract %s: name and symbol are limited to %d bytes", c.Contract, MaxContractText)
		}
		descs[i], fixes[i] = desc, db.ContractFix{Name: c.Name, Symbol: c.Symbol, Decimals: uint8(c.Decimals), Standard: std}
	}
	if err := a.st.WriteContractFixes(descs, fixes); err != nil {
		if errors.Is(err, db.ErrBadContractFix) || errors.Is(err, db.ErrReadOnly) {
			return 0, &Error{Msg: err.Error(), Err: err}
		}
		return 0, fmt.Errorf("update contracts: %w", err)
	}
	return len(infos), nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Delete removes an operator's fix of a contract, which then answers the
// metadata the node gave when the index met it; purged is the record as
// it was answered with the fix (nil: there was no fix).
func (a *ContractAdmin) Delete(address string) (contract string, purged *AdminContractInfo, err error) {
	desc, err := a.contract(address)
	if err != nil {
		return "", nil, err
	}
	snap, err := a.st.Snapshot()
	if err != nil {
		return "", nil, err
	}
	ci, err := db.ReadContractInfo(snap, desc)
	snap.Release()
	if err != nil {
		return "", nil, err
	}
	f, err := a.st.DeleteContractFix(desc)
	if errors.Is(err, db.ErrReadOnly) {
		return "", nil, &Error{Msg: err.Error(), Err: err}
	}
	if err != nil || f == nil || ci == nil {
		return a.s.addr(desc), nil, err
	}
	out := a.render(desc, ci)
	return a.s.addr(desc), &out, nil
}

// InternalDataErrors lists the blocks whose trace failed, oldest first.
func (a *ContractAdmin) InternalDataErrors() ([]InternalDataError, error) {
	snap, err := a.st.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	errs, err := db.ReadTraceErrors(snap)
	if err != nil {
		return nil, err
	}
	out := make([]InternalDataError, len(errs))
	for i, e := range errs {
		out[i] = InternalDataError{Height: e.Height, Hash: a.s.hexPrefix + e.Hash.String(), ErrorMessage: e.Message}
	}
	return out, nil
}
