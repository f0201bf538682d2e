package api

import (
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Block answers block/{height|hash} with a page of its txs in the
// Ethereum shape. Header fields that Ethereum blocks lack (version,
// merkle root, bits) are zero or empty, as in Blockbook.
func (s *EthService) Block(ctx context.Context, id string, page, pageSize int) (*Block, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	height, meta, err := s.resolveBlock(ctx, v, id)
	if err != nil {
		return nil, err
	}
	r := newEthRenderer(s, v)
	blk, err := r.block(ctx, meta.Hash, height)
	if err != nil {
		return nil, err
	}
	bi := BlockInfo{
		Hash: s.hashString(blk.Hash), Height: blk.Height, Confirmations: int(v.confirmations(blk.Height)),
		Size: blk.Size, Time: blk.Time, Version: "0", Nonce: blk.Eth.Nonce, Difficulty: blk.Eth.Difficulty,
	}
	if blk.Height > 0 {
		bi.Prev = s.hashString(blk.Prev)
	}
	if next, err := db.ReadBlockMeta(v.snap, blk.Height+1); err == nil && next != nil {
		bi.Next = s.hashString(next.Hash)
	}
	txs := blk.Eth.Txs
	out := &Block{BlockInfo: bi, TxCount: len(txs)}
	page, size, total := blockPaging(page, pageSize, len(txs))
	out.Paging = Paging{Page: page, TotalPages: total, ItemsOnPage: size}
	start := (page - 1) * size
	for i := start; i < min(start+size, len(txs)); i++ {
		tx, err := r.fromBlock(ctx, blk, &txs[i])
		if err != nil {
			return nil, err
		}
		out.Txs = append(out.Txs, tx)
	}
	out.AddressAliases, err = r.addressAliases(out.Txs)
	return out, err
}

// Contract answers contract/{address} from the index, with a fungible
// token's current rates (in currency when asked); with protocols erc4626,
// a vault's data read from the node at the indexed tip.
func (s *EthService) Contract(ctx context.Context, contract string, q ContractQuery) (*ContractInfo, error) {
	// Blockbook's texts (contract/ and getContractInfo).
	if strings.TrimSpace(contract) == "" {
		return nil, userErr("Missing contract")
	}
	if err := CheckProtocols(q.Protocols, true); err != nil {
		return nil, err
	}
	desc, err := s.addrs.AddrDescFromAddress(strings.TrimSpace(contract))
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), bchain.ErrInvalidAddress.Error()+": ")
		return nil, &Error{Msg: "Invalid contract, " + reason, Err: err}
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	ci, err := s.contractInfo(v, desc)
	if err != nil {
		return nil, err
	}
	if ci == nil {
		return nil, &Error{Msg: "Contract not found", Err: ErrNotFound}
	}
	ci.Rates = s.contractRates(ci, q.Currency)
	// As Blockbook, only fungible (or unclassified) contracts are asked.
	if wantsErc4626(q.Protocols) && (ci.Standard == "" || ci.Standard == bchain.TokenERC20.String()) {
		if vault := s.vaultSnapshot(ctx, v, ci, desc); vault != nil {
			ci.Protocols = &ContractInfoProtocols{Erc4626: vault}
		}
	}
	return ci, nil
}

// CheckFeeTargets accepts any targets: Ethereum has no confirmation
// targets, estimateFee answers the same price for each.
func (s *EthService) CheckFeeTargets([]int) error { return nil }

// ethFees is the fee estimation capability of an Ethereum-type service
// whose node suggests gas prices.
type ethFees struct {
	*EthService
	est bchain.FeeEstimator
}

// gasPrice is the node's suggestion in wei per gas (with eip1559Fees, the
// medium tier's max fee).
func (s ethFees) gasPrice(ctx context.Context, conservative bool) (int64, error) {
	return s.est.EstimateFee(ctx, 1, conservative)
}

// EstimateFee answers estimatefee/{blocks}: the gas price in ETH per gas
// (Blockbook renders it in coin units, as for Bitcoin-type chains).
func (s ethFees) EstimateFee(ctx context.Context, _ int, conservative bool) (*Result, error) {
	wei, err := s.gasPrice(ctx, conservative)
	if err != nil {
		return nil, err
	}
	return &Result{Result: decimalString(wei, s.backend.Params.Decimals)}, nil
}

// plainTransferGas is the gas of a transfer without call data; the gas of
// contract calls is not estimated (no eth_estimateGas yet).
const plainTransferGas = 21000

// FeeEstimates answers estimateFee: the gas price in wei per gas for
// every target (Ethereum has no confirmation targets), the gas limit and
// fee of a plain transfer, and with eip1559Fees the EIP-1559 tiers.
func (s ethFees) FeeEstimates(ctx context.Context, blocks []int, q FeeQuery) ([]FeeEstimate, error) {
	out := make([]FeeEstimate, len(blocks))
	if len(blocks) == 0 {
		return out, nil
	}
	price, err := s.gasPrice(ctx, q.Conservative)
	if err != nil {
		return nil, err
	}
	var tiers *Eip1559Fees
	if s.cfg.Eip1559Fees && s.eth != nil {
		f, err := s.eth.EIP1559Fees(ctx)
		switch {
		case err == nil:
			tier := func(t bchain.EthFeeTier) *Eip1559Fee {
				return &Eip1559Fee{MaxFeePerGas: amount(t.MaxFeePerGas), MaxPriorityFeePerGas: amount(t.MaxPriorityFeePerGas)}
			}
			tiers = &Eip1559Fees{BaseFeePerGas: amount(f.BaseFee), Low: tier(f.Low), Medium: tier(f.Medium), High: tier(f.High), Instant: tier(f.Instant)}
		case !errors.Is(err, bchain.ErrUnsupported):
			return nil, err
		}
	}
	gas, err := s.gasLimit(ctx, q)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].FeePerUnit = strconv.FormatInt(price, 10)
		if gas > 0 {
			out[i].FeeLimit = strconv.FormatUint(gas, 10)
			out[i].FeePerTx = new(big.Int).Mul(big.NewInt(price), new(big.Int).SetUint64(gas)).String()
		}
		out[i].Eip1559 = tiers
	}
	return out, nil
}

// SendTx relays a signed tx (hex, 0x-prefixed or not); the node's
// refusal becomes a user error with its message.
func (s *EthService) SendTx(ctx context.Context, txHex string) (*Result, error) {
	txHex = strings.TrimSpace(txHex)
	if len(txHex) >= 2 && (txHex[:2] == "0x" || txHex[:2] == "0X") {
		txHex = txHex[2:]
	}
	if txHex == "" {
		return nil, userErr("Missing tx blob")
	}
	if len(txHex) > MaxTxHexLen {
		return nil, userErr("Transaction is larger than %d hex characters", MaxTxHexLen)
	}
	raw, err := hex.DecodeString(txHex)
	if err != nil {
		return nil, userErr("Invalid transaction hex: %v", err)
	}
	txid, err := s.backend.Broadcast.SendRawTx(ctx, raw)
	var rpcErr *bchain.RPCError
	if errors.As(err, &rpcErr) {
		return nil, &Error{Msg: rpcErr.Message, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return &Result{Result: s.hashString(txid)}, nil
}
