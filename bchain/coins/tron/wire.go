package tron

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/eth"
)

// java-tron's HTTP answers (protocol.Block, protocol.Transaction and
// protocol.TransactionInfo rendered by its JsonFormat): bytes are hex
// without 0x, addresses 41-prefixed hex, amounts in sun as JSON numbers,
// times in milliseconds. The shapes are those of the recorded answers in
// testdata/; the double (tools/trondouble) serves the same types.

// HTTPBlock is /wallet/getblockbyid, /wallet/getblockbynum and their
// /walletsolidity twins; {} (all zero) when the block is unknown.
type HTTPBlock struct {
	BlockID      string   `json:"blockID"`
	BlockHeader  Header   `json:"block_header"`
	Transactions []HTTPTx `json:"transactions,omitempty"`
}

// Header is a block's block_header.
type Header struct {
	RawData struct {
		Number         int64  `json:"number"`
		TxTrieRoot     string `json:"txTrieRoot,omitempty"`
		WitnessAddress string `json:"witness_address"`
		ParentHash     string `json:"parentHash"`
		Version        int    `json:"version,omitempty"`
		Timestamp      int64  `json:"timestamp"`
	} `json:"raw_data"`
	WitnessSignature string `json:"witness_signature,omitempty"`
}

// HTTPTx is a protocol.Transaction with java-tron's added txID.
type HTTPTx struct {
	Ret []struct {
		ContractRet string `json:"contractRet"`
	} `json:"ret,omitempty"`
	TxID    string `json:"txID"`
	RawData struct {
		Contract  []Contract `json:"contract"`
		FeeLimit  *int64     `json:"fee_limit,omitempty"`
		Timestamp int64      `json:"timestamp,omitempty"`
		Data      string     `json:"data,omitempty"`
	} `json:"raw_data"`
	RawDataHex string `json:"raw_data_hex,omitempty"`
}

// Contract is one of a tx's contracts (java-tron txs carry exactly one).
type Contract struct {
	Type      string `json:"type"`
	Parameter struct {
		Value   ContractValue `json:"value"`
		TypeURL string        `json:"type_url,omitempty"`
	} `json:"parameter"`
}

// ContractValue holds the fields of the contract types followed here;
// each type fills its own.
type ContractValue struct {
	OwnerAddress    string `json:"owner_address,omitempty"`
	ToAddress       string `json:"to_address,omitempty"`
	ContractAddress string `json:"contract_address,omitempty"`
	ReceiverAddress string `json:"receiver_address,omitempty"`
	AccountAddress  string `json:"account_address,omitempty"`
	Amount          int64  `json:"amount,omitempty"`
	CallValue       int64  `json:"call_value,omitempty"`
	Data            string `json:"data,omitempty"`
	AssetName       string `json:"asset_name,omitempty"`
	FrozenBalance   *int64 `json:"frozen_balance,omitempty"`
	UnfreezeBalance *int64 `json:"unfreeze_balance,omitempty"`
	Balance         *int64 `json:"balance,omitempty"`
	Resource        string `json:"resource,omitempty"`
	Votes           []Vote `json:"votes,omitempty"`
}

// Vote is one VoteWitnessContract entry.
type Vote struct {
	VoteAddress string `json:"vote_address"`
	VoteCount   *int64 `json:"vote_count"`
}

// TxInfo is /wallet/gettransactioninfobyid or one entry of
// /wallet/gettransactioninfobyblocknum: the tx's outcome.
type TxInfo struct {
	ID              string   `json:"id"`
	Fee             *int64   `json:"fee,omitempty"`
	BlockNumber     int64    `json:"blockNumber"`
	BlockTimeStamp  int64    `json:"blockTimeStamp"`
	ContractResult  []string `json:"contractResult,omitempty"`
	ContractAddress string   `json:"contract_address,omitempty"`
	Receipt         struct {
		EnergyUsage      *int64 `json:"energy_usage,omitempty"`
		EnergyFee        *int64 `json:"energy_fee,omitempty"`
		EnergyUsageTotal *int64 `json:"energy_usage_total,omitempty"`
		NetUsage         *int64 `json:"net_usage,omitempty"`
		NetFee           *int64 `json:"net_fee,omitempty"`
		Result           string `json:"result,omitempty"`
	} `json:"receipt"`
	AssetIssueID         string `json:"assetIssueID,omitempty"`
	WithdrawAmount       *int64 `json:"withdraw_amount,omitempty"`
	UnfreezeAmount       *int64 `json:"unfreeze_amount,omitempty"`
	WithdrawExpireAmount *int64 `json:"withdraw_expire_amount,omitempty"`
	Log                  []Log  `json:"log,omitempty"`
	Result               string `json:"result,omitempty"` // "FAILED"; absent on success
	ResMessage           string `json:"resMessage,omitempty"`
	// Internal are the VM's inner calls (with the node's
	// saveInternalTx on).
	Internal []InternalTx `json:"internal_transactions,omitempty"`
}

// InternalTx is one inner call: note is hex of "call", "create" or
// "suicide"; a rejected one was reverted; callValueInfo lists the TRX
// (no tokenId) or TRC-10 (tokenId) it carried.
type InternalTx struct {
	Hash          string `json:"hash"`
	Caller        string `json:"caller_address"`
	TransferTo    string `json:"transferTo_address"`
	CallValueInfo []struct {
		CallValue int64  `json:"callValue,omitempty"`
		TokenID   string `json:"tokenId,omitempty"`
	} `json:"callValueInfo"`
	Note     string `json:"note"`
	Rejected bool   `json:"rejected,omitempty"`
}

// internalData is the tx's internal TRX transfers in the shared shape,
// as Blockbook builds them (TRC-10 values left out, the top-level kind
// create or selfdestruct when an inner call was one), except that a
// rejected call's value, which did not move, is left out too (the
// shared type's rule) and only marks the error.
func (i *TxInfo) internalData() (*bchain.EthInternalData, error) {
	d := &bchain.EthInternalData{Type: bchain.EthInternalCall}
	if r := i.Receipt.Result; r != "" && r != "SUCCESS" {
		d.Error = r
	}
	for _, it := range i.Internal {
		note, err := hex.DecodeString(it.Note)
		if err != nil {
			return nil, fmt.Errorf("internal tx %s note: %w", it.Hash, err)
		}
		kind := bchain.EthInternalCall
		switch string(note) {
		case "create":
			kind = bchain.EthInternalCreate
		case "suicide":
			kind = bchain.EthInternalSelfDestruct
		}
		if kind != bchain.EthInternalCall && d.Type == bchain.EthInternalCall {
			d.Type = kind
		}
		if it.Rejected {
			if d.Error == "" {
				d.Error = "Internal transaction rejected"
			}
			continue
		}
		from, err := ethAddress(it.Caller)
		if err != nil {
			return nil, fmt.Errorf("internal tx %s caller: %w", it.Hash, err)
		}
		to, err := ethAddress(it.TransferTo)
		if err != nil {
			return nil, fmt.Errorf("internal tx %s recipient: %w", it.Hash, err)
		}
		for _, cv := range it.CallValueInfo {
			if cv.CallValue > 0 && cv.TokenID == "" {
				d.Transfers = append(d.Transfers, bchain.EthInternalTransfer{Type: kind, From: from, To: to, Value: big.NewInt(cv.CallValue)})
			}
		}
	}
	return d, nil
}

// Log is a VM event: the address is the bare 20 bytes (EVM's), topics and
// data hex without 0x; data is left out when empty.
type Log struct {
	Address string   `json:"address"`
	Topics  []string `json:"topics"`
	Data    string   `json:"data,omitempty"`
}

// failed tells a tx whose contract did not apply: the info's result (any
// contract) or a VM receipt result other than SUCCESS.
func (i *TxInfo) failed() bool {
	if i.Result == "FAILED" {
		return true
	}
	return i.Receipt.Result != "" && i.Receipt.Result != "SUCCESS" && i.Receipt.Result != "DEFAULT"
}

// ethLogs converts the VM logs into the shared account-model logs (index
// counts across the block, as Ethereum's do).
func (i *TxInfo) ethLogs(next *uint) ([]bchain.EthLog, error) {
	out := make([]bchain.EthLog, 0, len(i.Log))
	for _, l := range i.Log {
		a, err := ethAddress(l.Address)
		if err != nil {
			return nil, fmt.Errorf("log address: %w", err)
		}
		el := bchain.EthLog{Address: a, Index: *next}
		*next++
		for _, t := range l.Topics {
			h, err := ParseID(t)
			if err != nil {
				return nil, fmt.Errorf("log topic: %w", err)
			}
			el.Topics = append(el.Topics, h)
		}
		if el.Data, err = hex.DecodeString(l.Data); err != nil {
			return nil, fmt.Errorf("log data: %w", err)
		}
		out = append(out, el)
	}
	return out, nil
}

// Counterparty is the address a contract names besides its owner, by
// type: the recipient of TRX or TRC-10, the called contract, the
// receiver of delegated resources or the account created. Votes,
// freezes and withdrawals have none (Blockbook's vout is then empty).
func (v *ContractValue) Counterparty(typ string) string {
	switch typ {
	case "TransferContract", "TransferAssetContract":
		return v.ToAddress
	case "TriggerSmartContract":
		return v.ContractAddress
	case "DelegateResourceContract", "UnDelegateResourceContract", "FreezeBalanceContract", "UnfreezeBalanceContract":
		return v.ReceiverAddress // v1 freezes name one when they delegate
	case "AccountCreateContract":
		return v.AccountAddress
	}
	return ""
}

// TRXValue is the sun a contract moves from its owner to its counterparty
// (TRX transfers and call values); 0 for the others, whose TRX stays the
// owner's (frozen, voted, delegated).
func (v *ContractValue) TRXValue(typ string) int64 {
	switch typ {
	case "TransferContract":
		return v.Amount
	case "TriggerSmartContract":
		return v.CallValue
	}
	return 0
}

// ethTx maps a tx and its info onto the shared account-model tx: sender
// the owner, recipient the counterparty, value the TRX moved, receipt
// status and logs from the info, and the TRC-20/721 transfers the logs
// carry (Ethereum's decoder: Tron's VM emits Ethereum's events).
func ethTx(tx *HTTPTx, info *TxInfo, pos int, nextLog *uint, internal bool) (bchain.EthTx, error) {
	id, err := ParseID(tx.TxID)
	if err != nil {
		return bchain.EthTx{}, err
	}
	if len(tx.RawData.Contract) != 1 {
		return bchain.EthTx{}, fmt.Errorf("tx %s has %d contracts", tx.TxID, len(tx.RawData.Contract))
	}
	c := &tx.RawData.Contract[0]
	v := &c.Parameter.Value
	out := bchain.EthTx{Hash: id, Position: pos, Value: big.NewInt(v.TRXValue(c.Type))}
	if out.From, err = ethAddress(v.OwnerAddress); err != nil {
		return out, fmt.Errorf("tx %s owner: %w", tx.TxID, err)
	}
	if cp := v.Counterparty(c.Type); cp != "" {
		to, err := ethAddress(cp)
		if err != nil {
			return out, fmt.Errorf("tx %s %s: %w", tx.TxID, c.Type, err)
		}
		out.To = &to
	}
	if v.Data != "" {
		if out.Data, err = hex.DecodeString(v.Data); err != nil {
			return out, fmt.Errorf("tx %s data: %w", tx.TxID, err)
		}
	}
	// The fee is the TRX burned (energy and bandwidth not covered by
	// stakes), in sun: as gas used at a price of 1, the shared code's fee.
	r := &bchain.EthReceipt{Status: bchain.EthStatusSuccess, EffectiveGasPrice: big.NewInt(1)}
	if info.Fee != nil && *info.Fee > 0 {
		r.GasUsed = uint64(*info.Fee)
	}
	if out.ChainExtra, err = json.Marshal(Extra(tx, info)); err != nil {
		return out, err
	}
	if info.failed() {
		r.Status = bchain.EthStatusFailure
		out.Value = new(big.Int) // a failed contract moves no TRX
	}
	if c.Type == "CreateSmartContract" && info.ContractAddress != "" {
		ca, err := ethAddress(info.ContractAddress)
		if err != nil {
			return out, fmt.Errorf("tx %s created contract: %w", tx.TxID, err)
		}
		r.ContractAddress = &ca
	}
	if r.Logs, err = info.ethLogs(nextLog); err != nil {
		return out, fmt.Errorf("tx %s: %w", tx.TxID, err)
	}
	out.Receipt = r
	if r.Status == bchain.EthStatusSuccess {
		out.Transfers = eth.TokenTransfers(r.Logs)
	}
	if internal {
		if out.Internal, err = info.internalData(); err != nil {
			return out, fmt.Errorf("tx %s: %w", tx.TxID, err)
		}
	}
	return out, nil
}
