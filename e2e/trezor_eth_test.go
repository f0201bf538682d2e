package e2e

// The real wallet client in EVM mode: tools/js/trezor-eth.mjs drives our
// /websocket on the Ethereum stack of e2e_eth_test.go through
// @trezor/blockchain-link's Blockbook worker (which switches to EVM
// parsing on a string "nonce") and checks what it returns against facts
// computed here from the ethgen ledger (and, for what the ledger does not
// keep, such as gas limits, block times and fee history, from the node).
// Protocol on top of the Bitcoin script's: "need-payment" asks the test to
// send the prepared payment (answer "tx <hash>"); "need-block" asks for a
// block (answer "block <height> <hash> <json of the mined txs' fees>").

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/ethgen"
)

const trezorEthScript = "../tools/js/trezor-eth.mjs"

type trezorEthFacts struct {
	PingTimeoutMs int64                   `json:"pingTimeoutMs"`
	Info          trezorInfo              `json:"info"`
	BlockHashes   map[string]string       `json:"blockHashes"`
	Accounts      []trezorEthAccount      `json:"accounts"`
	Txs           map[string]*trezorEthTx `json:"txs"` // every ledger tx, pending ones too
	// GetTx are the txs getTransaction is asked for, by kind.
	GetTx     map[string]string `json:"getTx"`
	Fees      trezorEthFees     `json:"fees"`
	Payment   trezorEthLive     `json:"payment"` // sent by the test on "need-payment"
	Push      trezorEthLive     `json:"push"`    // pushed by the script
	Malformed []string          `json:"malformed"`
	// PayViaServer: the payment goes through sendtx (disableMempoolSync).
	PayViaServer bool `json:"-"`
}

type trezorEthAccount struct {
	Name         string             `json:"name"`
	Address      string             `json:"address"` // EIP-55
	Balance      string             `json:"balance"`
	Nonce        string             `json:"nonce"`
	TxCount      int                `json:"txCount"` // mined
	NonTokenTxs  int                `json:"nonTokenTxs"`
	Unconfirmed  int                `json:"unconfirmed"`
	Pending      []string           `json:"pending"` // pending txids
	Txids        []string           `json:"txids"`   // mined, newest first
	Tokens       []trezorEthToken   `json:"tokens"`  // by contract
	ContractInfo *trezorEthContract `json:"contractInfo,omitempty"`
}

type trezorEthToken struct {
	Standard  string           `json:"standard"`
	Contract  string           `json:"contract"`
	Name      string           `json:"name"`
	Symbol    string           `json:"symbol"`
	Decimals  int              `json:"decimals"`
	Transfers int              `json:"transfers"`
	Balance   string           `json:"balance,omitempty"` // ERC20
	IDs       []string         `json:"ids,omitempty"`     // ERC721 held
	Multi     []trezorEthMulti `json:"multi,omitempty"`   // ERC1155 held (nonzero)
}

type trezorEthMulti struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

type trezorEthContract struct {
	Standard   string `json:"standard"`
	Contract   string `json:"contract"`
	Name       string `json:"name"`
	Symbol     string `json:"symbol"`
	Decimals   int    `json:"decimals"`
	Created    uint64 `json:"createdInBlock,omitempty"`
	Destructed uint64 `json:"destructedInBlock,omitempty"`
}

// trezorEthTx is a ledger tx with what the node adds (gas limit, fee caps,
// calldata, block time and position).
type trezorEthTx struct {
	Txid      string `json:"txid"`
	Type      uint8  `json:"type"`
	From      string `json:"from"`
	To        string `json:"to"` // the recipient, or the contract a creation made
	Value     string `json:"value"`
	Nonce     uint64 `json:"nonce"`
	Pending   bool   `json:"pending"`
	Height    int64  `json:"height"` // -1 pending
	BlockHash string `json:"blockHash,omitempty"`
	BlockTime int64  `json:"blockTime"`
	Position  int    `json:"position"`
	Status    int    `json:"status"` // -1 pending
	GasLimit  uint64 `json:"gasLimit"`
	GasUsed   uint64 `json:"gasUsed,omitempty"`
	// Fee as Blockbook shows it: gas used × effective gas price (no blob
	// gas) when mined, the fee cap × gas limit when pending.
	Fee            string                       `json:"fee"`
	GasPrice       string                       `json:"gasPrice,omitempty"` // effective when mined
	MaxFee         string                       `json:"maxFeePerGas,omitempty"`
	MaxTip         string                       `json:"maxPriorityFeePerGas,omitempty"`
	BaseFee        string                       `json:"baseFeePerGas,omitempty"`
	Data           string                       `json:"data,omitempty"`
	Created        string                       `json:"createdContract,omitempty"` // a creation tx's contract
	ParsedData     *api.EthereumParsedInputData `json:"parsedData"`
	TokenTransfers []trezorEthTransfer          `json:"tokenTransfers"`
	Internal       []trezorEthInternal          `json:"internal"`
}

// trezorEthTransfer is a token transfer as the wire groups it: the entries
// of one ERC1155 batch are one transfer with several values.
type trezorEthTransfer struct {
	Standard string           `json:"standard"`
	Contract string           `json:"contract"`
	From     string           `json:"from"`
	To       string           `json:"to"`
	Name     string           `json:"name"`
	Symbol   string           `json:"symbol"`
	Decimals int              `json:"decimals"`
	Value    string           `json:"value,omitempty"` // ERC20 amount, ERC721 token id
	Multi    []trezorEthMulti `json:"multi,omitempty"`
}

type trezorEthInternal struct {
	Type  int    `json:"type"` // 0 call, 1 create, 2 selfdestruct
	From  string `json:"from"`
	To    string `json:"to"`
	Value string `json:"value"`
}

// trezorEthFees is what the node's fee history makes of the EIP-1559
// tiers (bchain/coins/eth EIP1559Fees: 10/30/60/90th percentile tips over
// 20 blocks, averaged, medium and up at least eth_maxPriorityFeePerGas,
// max fee = 2 × next base fee + tip).
type trezorEthFees struct {
	// EIP1559 is the config's eip1559Fees; without it the fee is the
	// node's eth_gasPrice (GasPrice, set by runTrezorEVM), with no tiers.
	EIP1559  bool        `json:"eip1559"`
	GasPrice string      `json:"gasPrice,omitempty"`
	BaseFee  string      `json:"baseFeePerGas"`
	Tiers    [][2]string `json:"tiers"` // low, medium, high, instant: [maxFee, tip]
}

// trezorEthLive is a signed tx the live part sends.
type trezorEthLive struct {
	Txid     string `json:"txid"`
	Hex      string `json:"hex"`
	From     string `json:"from"`
	To       string `json:"to"`
	Value    string `json:"value"`
	Nonce    uint64 `json:"nonce"`
	GasLimit uint64 `json:"gasLimit"`
	MaxFee   string `json:"maxFeePerGas"`
	MaxTip   string `json:"maxPriorityFeePerGas"`
	Data     string `json:"data,omitempty"`
	// ParsedData is what the mined tx shows (pending notifications have none).
	ParsedData *api.EthereumParsedInputData `json:"parsedData"`
	// EstimatedGas is the node's eth_estimateGas of the call, which
	// estimateFee must give as feeLimit.
	EstimatedGas string             `json:"estimatedGas,omitempty"`
	Payee        string             `json:"payee"` // the subscribed address it pays (value or token)
	Token        *trezorEthTransfer `json:"token,omitempty"`
	Tx           *types.Transaction `json:"-"`
}

func TestTrezorClientEthereum(t *testing.T) {
	node := trezorPrereqs(t)
	e := startEthE2E(t)
	facts := trezorEthFactsOf(t, e)
	data, err := json.MarshalIndent(facts, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	factsPath := filepath.Join(t.TempDir(), "facts.json")
	if err := os.WriteFile(factsPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.runTrezorScript(t, node, factsPath, facts)
}

func trezorEthFactsOf(t *testing.T, e *ethE2E) *trezorEthFacts {
	t.Helper()
	ctx := context.Background()
	cl := e.dev.Client()
	led := e.ledger
	tipH, tipHash := e.dev.Head()
	tip, err := cl.HeaderByHash(ctx, tipHash)
	if err != nil {
		t.Fatal(err)
	}
	f := &trezorEthFacts{
		PingTimeoutMs: trezorPingTimeout.Milliseconds(),
		// startEthE2E's config: coin "Ethereum Regtest", shortcut rETH and
		// no network, so the network is the shortcut; regtest is a testnet.
		Info: trezorInfo{Name: "Ethereum Regtest", Shortcut: "rETH", Network: "rETH", Testnet: true, Decimals: 18,
			TipHeight: int32(tipH), TipHash: tipHash.Hex(), TipTime: int64(tip.Time)},
		BlockHashes: map[string]string{},
		Txs:         map[string]*trezorEthTx{},
		GetTx:       map[string]string{},
	}

	// Blocks: time, base fee and tx order from the node.
	type blockInfo struct {
		time    int64
		baseFee *big.Int
		pos     map[common.Hash]int
	}
	blocks := map[common.Hash]*blockInfo{}
	for _, b := range led.Blocks {
		blk, err := cl.BlockByHash(ctx, b.Hash)
		if err != nil {
			t.Fatal(err)
		}
		bi := &blockInfo{time: int64(blk.Time()), baseFee: blk.BaseFee(), pos: map[common.Hash]int{}}
		for i, tx := range blk.Transactions() {
			bi.pos[tx.Hash()] = i
		}
		blocks[b.Hash] = bi
		f.BlockHashes[fmt.Sprint(b.Number)] = b.Hash.Hex()
	}

	parsed, _ := e.waitFourByte(t)
	for h, lt := range led.Txs {
		ntx, _, err := cl.TransactionByHash(ctx, h)
		if err != nil {
			t.Fatalf("tx %s: %v", h, err)
		}
		x := &trezorEthTx{Txid: h.Hex(), From: lt.From.Hex(), Value: lt.Value.String(), Nonce: lt.Nonce,
			Pending: lt.Pending, Height: -1, Status: -1, GasLimit: ntx.Gas(), TokenTransfers: trezorEthTransfers(led, lt.TokenTransfers),
			Internal: []trezorEthInternal{}}
		// A creation has no recipient; its type is the internal data's
		// kind (1 create) once mined, as Blockbook's.
		if lt.To != nil {
			x.To = lt.To.Hex()
		} else if lt.Created != (common.Address{}) {
			x.Created = lt.Created.Hex()
		}
		if lt.To == nil && !lt.Pending {
			x.Type = 1
		}
		if len(ntx.Data()) > 0 {
			x.Data = hexutil.Encode(ntx.Data())
		}
		x.ParsedData = parsed[h]
		if lt.Type >= types.DynamicFeeTxType {
			x.MaxFee, x.MaxTip = ntx.GasFeeCap().String(), ntx.GasTipCap().String()
		}
		if lt.Pending {
			// The wire's pending fees are 0 (as Blockbook's); the library
			// shows the most the tx may cost, maxFeePerGas × gas limit.
			x.GasPrice = ntx.GasFeeCap().String() // geth reports the fee cap as gasPrice of pending txs
			x.Fee = new(big.Int).Mul(ntx.GasFeeCap(), new(big.Int).SetUint64(ntx.Gas())).String()
		} else {
			rc, err := cl.TransactionReceipt(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			bi := blocks[lt.BlockHash]
			x.Height, x.BlockHash, x.BlockTime, x.Position = int64(lt.BlockNumber), lt.BlockHash.Hex(), bi.time, bi.pos[h]
			x.Status, x.GasUsed, x.BaseFee = int(lt.Status), lt.GasUsed, bi.baseFee.String()
			x.GasPrice = rc.EffectiveGasPrice.String()
			fee := new(big.Int).Mul(rc.EffectiveGasPrice, new(big.Int).SetUint64(lt.GasUsed))
			if lt.Type != types.BlobTxType && fee.Cmp(lt.Fee) != 0 {
				t.Fatalf("tx %s: receipt fee %s, ledger %s", h, fee, lt.Fee)
			}
			x.Fee = fee.String()
		}
		for _, it := range lt.InternalTransfers {
			kind := map[string]int{ethgen.InternalCall: 0, ethgen.InternalCreate: 1, ethgen.InternalSelfDestruct: 2}[it.Type]
			x.Internal = append(x.Internal, trezorEthInternal{Type: kind, From: it.From.Hex(), To: it.To.Hex(), Value: it.Value.String()})
		}
		f.Txs[x.Txid] = x
	}

	// Accounts: every named address of the ledger (accounts, the dev
	// account, the fee recipient, the contracts).
	for _, a := range led.SortedAddresses() {
		al := led.Addresses[a]
		if al.Name == "" {
			continue
		}
		// The nonce counts the pending txs it sent (the next one to use).
		nonce := al.Nonce
		acc := trezorEthAccount{Name: al.Name, Address: a.Hex(), Balance: al.Balance.String(),
			TxCount: len(al.Txs), NonTokenTxs: al.NonTokenTxs, Unconfirmed: len(al.PendingTxs), Pending: []string{}, Txids: []string{},
			Tokens: []trezorEthToken{}}
		for h := range al.PendingTxs {
			acc.Pending = append(acc.Pending, h.Hex())
			if led.Txs[h].From == a {
				nonce++
			}
		}
		acc.Nonce = fmt.Sprint(nonce)
		slices.Sort(acc.Pending)
		for h := range al.Txs {
			acc.Txids = append(acc.Txids, h.Hex())
		}
		// Newest first: by height, and within a block by position, both
		// descending (the index lists a block's txs last first).
		slices.SortFunc(acc.Txids, func(x, y string) int {
			tx, ty := f.Txs[x], f.Txs[y]
			if tx.Height != ty.Height {
				return int(ty.Height - tx.Height)
			}
			return ty.Position - tx.Position
		})
		for c, hd := range al.Tokens {
			acc.Tokens = append(acc.Tokens, trezorEthTokenOf(led, c, hd))
		}
		slices.SortFunc(acc.Tokens, func(x, y trezorEthToken) int { return strings.Compare(x.Contract, y.Contract) })
		if ci := led.Contracts[a]; ci != nil {
			acc.ContractInfo = &trezorEthContract{Standard: ci.Standard, Contract: a.Hex(), Name: ci.Name, Symbol: ci.Symbol, Decimals: ci.Decimals}
			for _, lt := range led.Txs {
				if lt.Created == a {
					acc.ContractInfo.Created = lt.BlockNumber
				}
				for _, it := range lt.InternalTransfers {
					if it.Type == ethgen.InternalSelfDestruct && it.From == a {
						acc.ContractInfo.Destructed = lt.BlockNumber
					}
				}
			}
		}
		f.Accounts = append(f.Accounts, acc)
	}
	if len(f.Accounts) < 12 {
		t.Fatalf("the scenario names only %d addresses", len(f.Accounts))
	}

	// getTransaction: one of each kind.
	for _, id := range slices.Sorted(maps.Keys(f.Txs)) {
		h := common.HexToHash(id)
		lt := led.Txs[h]
		kinds := map[string]bool{
			"erc20":        !lt.Pending && len(lt.TokenTransfers) == 1 && lt.TokenTransfers[0].Standard == ethgen.ERC20 && lt.To != nil,
			"erc1155batch": !lt.Pending && len(lt.TokenTransfers) > 1 && lt.TokenTransfers[0].Standard == ethgen.ERC1155 && lt.TokenTransfers[0].From != (common.Address{}),
			"erc721":       !lt.Pending && len(lt.TokenTransfers) == 1 && lt.TokenTransfers[0].Standard == ethgen.ERC721 && lt.TokenTransfers[0].From != (common.Address{}),
			"failed":       !lt.Pending && lt.Status == 0,
			"creation":     !lt.Pending && lt.To == nil,
			"internal":     len(lt.InternalTransfers) > 1 && lt.Type != types.SetCodeTxType,
			"selfdestruct": len(lt.InternalTransfers) == 1 && lt.InternalTransfers[0].Type == ethgen.InternalSelfDestruct,
			"blob":         lt.Type == types.BlobTxType,
			"setcode":      lt.Type == types.SetCodeTxType,
			"pending":      lt.Pending && len(lt.TokenTransfers) > 0,
		}
		for k, ok := range kinds {
			if _, have := f.GetTx[k]; ok && !have {
				f.GetTx[k] = h.Hex()
			}
		}
	}
	if len(f.GetTx) != 10 {
		t.Fatalf("the scenario lacks a kind of tx: %v", f.GetTx)
	}

	f.Fees = trezorEthFeesOf(t, e)
	f.Payment, f.Push = trezorEthLiveTxs(t, e)
	f.Malformed = []string{"0x123", "0xZZ" + strings.Repeat("0", 38), trezorBadChecksum(t, f.Accounts[0].Address)}
	return f
}

// trezorBadChecksum flips the case of one letter of an EIP-55 address: a
// mixed-case address whose checksum does not match.
func trezorBadChecksum(t *testing.T, a string) string {
	t.Helper()
	b := []byte(a)
	for i := 2; i < len(b); i++ {
		switch {
		case b[i] >= 'a' && b[i] <= 'f':
			b[i] -= 'a' - 'A'
		case b[i] >= 'A' && b[i] <= 'F':
			b[i] += 'a' - 'A'
		default:
			continue
		}
		if s := string(b); s != strings.ToLower(s) && s[2:] != strings.ToUpper(s[2:]) {
			return s
		}
		b = []byte(a)
	}
	t.Fatalf("%s: cannot make a bad checksum of it", a)
	return ""
}

// trezorEthTransfers renders ledger token transfers as the wire groups
// them: consecutive ERC1155 entries of one contract between the same two
// addresses are one batch log in this scenario.
func trezorEthTransfers(led *ethgen.Ledger, tts []ethgen.TokenTransfer) []trezorEthTransfer {
	out := []trezorEthTransfer{}
	for i, tt := range tts {
		if tt.Standard == ethgen.ERC1155 && i > 0 {
			p := tts[i-1]
			if p.Standard == ethgen.ERC1155 && p.Contract == tt.Contract && p.From == tt.From && p.To == tt.To {
				last := &out[len(out)-1]
				last.Multi = append(last.Multi, trezorEthMulti{ID: tt.TokenID.String(), Value: tt.Value.String()})
				continue
			}
		}
		x := trezorEthTransfer{Standard: tt.Standard, Contract: tt.Contract.Hex(), From: tt.From.Hex(), To: tt.To.Hex()}
		if c := led.Contracts[tt.Contract]; c != nil {
			x.Name, x.Symbol, x.Decimals = c.Name, c.Symbol, c.Decimals
		}
		switch tt.Standard {
		case ethgen.ERC721:
			x.Value = tt.TokenID.String()
		case ethgen.ERC1155:
			x.Multi = []trezorEthMulti{{ID: tt.TokenID.String(), Value: tt.Value.String()}}
		default:
			x.Value = tt.Value.String()
		}
		out = append(out, x)
	}
	return out
}

func trezorEthTokenOf(led *ethgen.Ledger, c common.Address, hd *ethgen.Holding) trezorEthToken {
	tk := trezorEthToken{Standard: hd.Standard, Contract: c.Hex(), Transfers: hd.Transfers}
	if ci := led.Contracts[c]; ci != nil {
		tk.Name, tk.Symbol, tk.Decimals = ci.Name, ci.Symbol, ci.Decimals
	}
	ids := func(m map[string]*big.Int) []*big.Int {
		var out []*big.Int
		for id, v := range m {
			if v.Sign() != 0 {
				n, _ := new(big.Int).SetString(id, 10)
				out = append(out, n)
			}
		}
		slices.SortFunc(out, func(a, b *big.Int) int { return a.Cmp(b) })
		return out
	}
	switch hd.Standard {
	case ethgen.ERC20:
		tk.Balance = hd.Balance.String()
	case ethgen.ERC721:
		held := map[string]*big.Int{}
		for id := range hd.NFTs {
			held[id] = big.NewInt(1)
		}
		for _, id := range ids(held) {
			tk.IDs = append(tk.IDs, id.String())
		}
	case ethgen.ERC1155:
		for _, id := range ids(hd.Multi) {
			tk.Multi = append(tk.Multi, trezorEthMulti{ID: id.String(), Value: hd.Multi[id.String()].String()})
		}
	}
	return tk
}

// trezorEthFeesOf asks the node for the fee history the tiers derive from.
func trezorEthFeesOf(t *testing.T, e *ethE2E) trezorEthFees {
	t.Helper()
	ctx := context.Background()
	pct := []float64{10, 30, 60, 90}
	fh, err := e.dev.Client().FeeHistory(ctx, 20, nil, pct)
	if err != nil {
		t.Fatal(err)
	}
	floor, err := e.dev.Client().SuggestGasTipCap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := fh.BaseFee[len(fh.BaseFee)-1] // the next block's
	tips := make([]*big.Int, len(pct))
	for i := range tips {
		sum := new(big.Int)
		for _, r := range fh.Reward {
			sum.Add(sum, r[i])
		}
		tips[i] = sum.Div(sum, big.NewInt(int64(max(len(fh.Reward), 1))))
		if i > 0 && tips[i].Cmp(floor) < 0 {
			tips[i] = new(big.Int).Set(floor)
		}
	}
	slices.SortFunc(tips, func(a, b *big.Int) int { return a.Cmp(b) })
	out := trezorEthFees{EIP1559: true, BaseFee: base.String()}
	for _, tip := range tips {
		maxFee := new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
		out.Tiers = append(out.Tiers, [2]string{maxFee.String(), tip.String()})
	}
	return out
}

// trezorEthLiveTxs signs the live part's txs: a value payment from the
// dev account to a fresh address (sent by the test), and an ERC20
// transfer from bob to another fresh address (pushed by the script).
func trezorEthLiveTxs(t *testing.T, e *ethE2E) (pay, push trezorEthLive) {
	t.Helper()
	ctx := context.Background()
	w, err := ethgen.NewWallet(ctx, e.dev.Client())
	if err != nil {
		t.Fatal(err)
	}
	payee, tokenPayee := ethgen.NewAccount("trezor/payee").Addr, ethgen.NewAccount("trezor/token-payee").Addr
	value := big.NewInt(1_234_567_890_123)
	tx, err := w.Build(ctx, ethgen.AccountFromKey("dev", e.dev.DevKey), &payee, nil, ethgen.TxOpts{Type: types.DynamicFeeTxType, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	pay = trezorEthLiveOf(t, tx, e.dev.DevAddr, payee)

	var token common.Address
	for c, ci := range e.ledger.Contracts {
		if ci.Kind == ethgen.TokenContract {
			token = c
		}
	}
	bob := ethgen.NewAccount("bob")
	amount := big.NewInt(5_000_000_000_000_000)
	if hd := e.ledger.Addresses[bob.Addr].Tokens[token]; hd == nil || hd.Balance.Cmp(amount) < 0 || len(e.ledger.Addresses[bob.Addr].PendingTxs) > 0 {
		t.Fatalf("bob cannot send %s of token %s (ledger %+v)", amount, token, hd)
	}
	data := ethgen.MustContract(ethgen.TokenContract).MustCalldata("transfer", tokenPayee, amount)
	tx, err = w.Build(ctx, bob, &token, data, ethgen.TxOpts{Type: types.DynamicFeeTxType})
	if err != nil {
		t.Fatal(err)
	}
	push = trezorEthLiveOf(t, tx, bob.Addr, tokenPayee)
	gas, err := e.dev.Client().EstimateGas(ctx, ethereum.CallMsg{From: bob.Addr, To: &token, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	push.EstimatedGas = fmt.Sprint(gas)
	ts := trezorEthTransfers(e.ledger, []ethgen.TokenTransfer{{Standard: ethgen.ERC20, Contract: token, From: bob.Addr, To: tokenPayee, Value: amount}})
	push.Token = &ts[0]
	return pay, push
}

func trezorEthLiveOf(t *testing.T, tx *types.Transaction, from, payee common.Address) trezorEthLive {
	t.Helper()
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	l := trezorEthLive{Txid: tx.Hash().Hex(), Hex: hexutil.Encode(raw), From: from.Hex(), To: tx.To().Hex(), Value: tx.Value().String(),
		Nonce: tx.Nonce(), GasLimit: tx.Gas(), MaxFee: tx.GasFeeCap().String(), MaxTip: tx.GasTipCap().String(), Payee: payee.Hex(), Tx: tx}
	if len(tx.Data()) > 0 {
		l.Data = hexutil.Encode(tx.Data())
	}
	l.ParsedData = wantParsedData(t, tx.Data())
	return l
}

// runTrezorScript runs trezor-eth.mjs, sending the payment and sealing
// blocks when it asks, and requires its "done" line.
func (e *ethE2E) runTrezorScript(t *testing.T, node, factsPath string, f *trezorEthFacts) {
	t.Helper()
	runClientScript(t, node, trezorEthScript, e.inst.base, factsPath, e.inst.logs, func(line string) (string, bool) {
		switch {
		case line == "need-payment" && f.PayViaServer:
			return e.trezorPayViaServer(t, f.Payment.Tx), true
		case line == "need-payment":
			return e.trezorPay(f.Payment.Tx), true
		case strings.HasPrefix(line, "need-block"):
			return e.trezorSeal(t, strings.Fields(line)[1:]), true
		}
		return "", false
	})
}

func (e *ethE2E) trezorPay(tx *types.Transaction) string {
	if err := e.dev.Client().SendTransaction(context.Background(), tx); err != nil {
		return "error " + err.Error()
	}
	return "tx " + tx.Hash().Hex()
}

// trezorSeal seals a block, checks that it holds txids, waits until the
// index has it, and answers with the mined txs' fees from their receipts.
func (e *ethE2E) trezorSeal(t *testing.T, txids []string) string {
	t.Helper()
	hash, err := e.dev.Commit()
	if err != nil {
		return "error " + err.Error()
	}
	e.waitHead(t)
	ctx := context.Background()
	hdr, err := e.dev.Client().HeaderByHash(ctx, hash)
	if err != nil {
		return "error " + err.Error()
	}
	mined := map[string]map[string]any{}
	for _, id := range txids {
		rc, err := e.dev.Client().TransactionReceipt(ctx, common.HexToHash(id))
		if err != nil || rc.BlockHash != hash || rc.Status != types.ReceiptStatusSuccessful {
			return fmt.Sprintf("error %s is not a successful tx of block %s (%v, %+v)", id, hash, err, rc)
		}
		mined[id] = map[string]any{"gasUsed": rc.GasUsed, "status": rc.Status, "gasPrice": rc.EffectiveGasPrice.String(),
			"fee": new(big.Int).Mul(rc.EffectiveGasPrice, new(big.Int).SetUint64(rc.GasUsed)).String(), "blockTime": hdr.Time,
			"baseFeePerGas": hdr.BaseFee.String()}
	}
	raw, _ := json.Marshal(mined)
	return fmt.Sprintf("block %d %s %s", hdr.Number.Uint64(), hash.Hex(), raw)
}
