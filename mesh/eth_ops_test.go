package mesh

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// The fee split of Ethereum-type operations on synthetic receipts, for
// what the dev chain cannot show: OP-stack L1 fees and vaults, blob fees.
// (The e2e test reconciles the dev chain's real blocks.)

type fakeEthSvc struct{ api.Service }

func (fakeEthSvc) HashString(h bchain.Hash) string { return "0x" + h.String() }
func (fakeEthSvc) DescAddress(d bchain.AddrDesc) (string, bool) {
	return "0x" + hex.EncodeToString(d), true
}

type fakeEthLedger struct {
	api.EthLedgerQueries
	kind bchain.EthChainKind
}

func (f fakeEthLedger) EthKind() bchain.EthChainKind { return f.kind }

func addr(b byte) bchain.EthAddress { return bchain.EthAddress{19: b} }

// sums books ops by account and currency symbol, checking their shape.
func sums(t *testing.T, tx Transaction) map[string]*big.Int {
	t.Helper()
	out := map[string]*big.Int{}
	for i, op := range tx.Operations {
		if op.OperationIdentifier.Index != int64(i) || op.Status != opSuccess || op.CoinChange != nil {
			t.Errorf("operation %d: %+v", i, op)
		}
		v, _ := new(big.Int).SetString(op.Amount.Value, 10)
		k := op.Account.Address + " " + op.Amount.Currency.Symbol
		if out[k] == nil {
			out[k] = new(big.Int)
		}
		out[k].Add(out[k], v)
	}
	return out
}

func TestEthFeeSplit(t *testing.T) {
	from, to, miner, token := addr(1), addr(2), addr(3), addr(4)
	const gas, price, base = 21000, 10, 7
	tx := func(status int) *bchain.EthTx {
		return &bchain.EthTx{From: from, To: &to, Value: big.NewInt(5), Receipt: &bchain.EthReceipt{Status: status,
			GasUsed: gas, EffectiveGasPrice: big.NewInt(price)}}
	}
	a := func(x bchain.EthAddress) string { return "0x" + hex.EncodeToString(x[:]) }
	for _, c := range []struct {
		name string
		kind bchain.EthChainKind
		tx   *bchain.EthTx
		want map[string]int64 // "<account> <symbol>" -> net change
	}{
		{"success", bchain.EthKindL1, tx(bchain.EthStatusSuccess), map[string]int64{
			a(from) + " ETH": -gas*price - 5, a(to) + " ETH": 5, a(miner) + " ETH": gas * (price - base)}},
		{"failed: fee only", bchain.EthKindL1, tx(bchain.EthStatusFailure), map[string]int64{
			a(from) + " ETH": -gas * price, a(miner) + " ETH": gas * (price - base)}},
		{"blob fee burnt", bchain.EthKindL1, func() *bchain.EthTx {
			x := tx(bchain.EthStatusSuccess)
			x.Receipt.BlobGasUsed, x.Receipt.BlobGasPrice = 131072, big.NewInt(3)
			return x
		}(), map[string]int64{a(from) + " ETH": -gas*price - 131072*3 - 5, a(to) + " ETH": 5, a(miner) + " ETH": gas * (price - base)}},
		{"OP-stack vaults", bchain.EthKindOPStack, func() *bchain.EthTx {
			x := tx(bchain.EthStatusSuccess)
			x.Receipt.L1 = &bchain.EthL1Fee{Fee: big.NewInt(1000)}
			return x
		}(), map[string]int64{a(from) + " ETH": -gas*price - 1000 - 5, a(to) + " ETH": 5, a(miner) + " ETH": gas * (price - base),
			a(opBaseFeeVault) + " ETH": gas * base, a(opL1FeeVault) + " ETH": 1000}},
		{"creation with value", bchain.EthKindL1, func() *bchain.EthTx {
			x := tx(bchain.EthStatusSuccess)
			x.To, x.Receipt.ContractAddress = nil, &token
			return x
		}(), map[string]int64{a(from) + " ETH": -gas*price - 5, a(token) + " ETH": 5, a(miner) + " ETH": gas * (price - base)}},
		{"ERC-20 mint", bchain.EthKindL1, func() *bchain.EthTx {
			x := tx(bchain.EthStatusSuccess)
			x.Value = new(big.Int)
			x.Transfers = []bchain.TokenTransfer{{Standard: bchain.TokenERC20, Contract: token, To: to, Value: big.NewInt(9)},
				{Standard: bchain.TokenERC721, Contract: token, From: to, To: from, Value: big.NewInt(1)}}
			return x
		}(), map[string]int64{a(from) + " ETH": -gas * price, a(miner) + " ETH": gas * (price - base), a(to) + " TKN": 9}},
	} {
		s := NewEth(fakeEthSvc{}, fakeEthLedger{kind: c.kind}, Options{Blockchain: "Ethereum", Network: "test", Symbol: "ETH", Decimals: 18})
		lt := &api.EthLedgerTx{Tx: c.tx, BaseFee: big.NewInt(base), Miner: miner,
			Tokens: map[bchain.EthAddress]*bchain.EthContractInfo{token: {Symbol: "TKN", Decimals: 6}}}
		got := sums(t, s.ethTransaction(lt))
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		for k, v := range c.want {
			if got[k] == nil || got[k].Int64() != v {
				t.Errorf("%s: %s changes by %v, want %d (all: %v)", c.name, k, got[k], v, got)
			}
		}
		if c.name == "ERC-20 mint" {
			for _, op := range s.ethTransaction(lt).Operations {
				if op.Type == opERC20 && (op.Amount.Currency.Decimals != 6 || !strings.EqualFold(fmt.Sprint(op.Amount.Currency.Metadata["contract"]), a(token))) {
					t.Errorf("token currency %+v", op.Amount.Currency)
				}
			}
		}
	}
}
