// Package trondouble is a java-tron double: a test server speaking the
// node's HTTP API (/wallet/..., /walletsolidity/...) and its
// Ethereum-compatible JSON-RPC (/jsonrpc) over a generated chain, since no
// java-tron runs here. Its answer shapes are those of the recorded real
// answers in bchain/coins/tron/testdata (java-tron's JsonFormat: hex
// without 0x, 41-prefixed addresses, sun and milliseconds as numbers); it
// writes them with its own types, so the client's decoding is checked
// against them rather than against itself.
//
// The chain: TRX transfers, TRC-20 transfers (a contract call whose
// Transfer event is a log), failed calls (reverted: no logs, no value),
// freezes, votes, resource delegations and account creations, with the
// solidified height a fixed depth under the tip and reorgs of the
// unsolidified blocks. What each tx does is also kept as plain facts
// (Tx.Parties) for tests to compute the expected index independently.
package trondouble

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// Kinds of generated txs (java-tron contract type names).
const (
	KindTransfer       = "TransferContract"
	KindTrigger        = "TriggerSmartContract"
	KindFreeze         = "FreezeBalanceV2Contract"
	KindVote           = "VoteWitnessContract"
	KindDelegate       = "DelegateResourceContract"
	KindCreateAcct     = "AccountCreateContract"
	KindUnfreeze       = "UnfreezeBalanceV2Contract"
	KindCreateContract = "CreateSmartContract"
	KindFreezeV1       = "FreezeBalanceContract"   // Stake 1.0, may delegate to a receiver
	KindUnfreezeV1     = "UnfreezeBalanceContract" // Stake 1.0, may undelegate from a receiver
	KindUndelegate     = "UnDelegateResourceContract"
	KindTRC10          = "TransferAssetContract"
	// KindWithdrawExpire takes back expired unfreezes, KindWithdrawReward
	// the voting rewards: TRX the owner gets from no one.
	KindWithdrawExpire = "WithdrawExpireUnfreezeContract"
	KindWithdrawReward = "WithdrawBalanceContract"
	// TRC10Asset is the generated chain's TRC-10 token id.
	TRC10Asset      = "1002000"
	transferMethod  = "a9059cbb" // transfer(address,uint256)
	transferTopic   = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
	blockIntervalMs = 3000
)

// Addr is a 20-byte account address (without Tron's 41 prefix).
type Addr [20]byte

// Hex41 is the address as java-tron's HTTP API writes it.
func (a Addr) Hex41() string { return "41" + hex.EncodeToString(a[:]) }

// Tx is one generated tx.
type Tx struct {
	ID     [32]byte
	Kind   string
	Owner  Addr
	To     *Addr // counterparty named by the contract (recipient, contract, receiver, new account)
	Amount int64 // sun: TRX moved, frozen, delegated; votes for a vote
	// Token is set for TRC-20 calls: the tokens moved from Owner to
	// TokenTo (when the call succeeds).
	Token   *Addr
	TokenTo Addr
	Failed  bool
	Fee     int64
	// CallValue is the TRX a contract call sends the contract, which
	// passes it on to InternalTo in an inner call (rejected when the call
	// fails).
	CallValue  int64
	InternalTo *Addr
	// Created is the contract a CreateSmartContract makes (none when it
	// fails, though the info still names the address).
	Created *Addr
	// Withdrawn is the TRX a withdrawal returned (the info's
	// withdraw_amount or withdraw_expire_amount).
	Withdrawn int64
	Raw       map[string]any // raw_data as java-tron renders it
}

// Parties are the addresses the tx concerns in the index: the owner, the
// counterparty, and for a successful token call the token's recipient
// (its Transfer log's; the sender is the owner) and the recipient of the
// TRX the contract passed on.
func (t *Tx) Parties() []Addr {
	p := []Addr{t.Owner}
	if t.To != nil {
		p = append(p, *t.To)
	}
	if t.Token != nil && !t.Failed {
		p = append(p, t.TokenTo)
	}
	if t.InternalTo != nil && !t.Failed {
		p = append(p, *t.InternalTo)
	}
	if t.Created != nil && !t.Failed {
		p = append(p, *t.Created)
	}
	return p
}

// Block is one generated block.
type Block struct {
	Number  int64
	ID      [32]byte
	Parent  [32]byte
	TimeMs  int64
	Witness Addr
	Txs     []*Tx
}

// Chain is the double's chain: blocks by height of the active branch,
// every block ever made by id (a reorged block stays known by hash, as
// on a node).
type Chain struct {
	mu         sync.Mutex
	rng        *rand.Rand
	Accounts   []Addr
	Tokens     []Addr
	Witnesses  []Addr
	blocks     []*Block
	byID       map[[32]byte]*Block
	solidDepth int
	chainID    string
	netVersion string
	fork       int // bumped by each reorg so replacement blocks differ
	pending    []*Tx
	generated  int // the first accounts, which start with InitialBalance
}

// Options shape a generated chain.
type Options struct {
	Seed       uint64
	Accounts   int
	Tokens     int
	SolidDepth int    // blocks under the tip not yet solidified (java-tron: about 19)
	ChainID    string // eth_chainId; mainnet's "0x2b6653dc" when empty
	NetVersion string // net_version; mainnet's "11111" when empty
}

// New makes a chain with its genesis block.
func New(o Options) *Chain {
	if o.Accounts < 2 {
		o.Accounts = 8
	}
	if o.Tokens < 1 {
		o.Tokens = 2
	}
	if o.ChainID == "" {
		o.ChainID = "0x2b6653dc"
	}
	if o.NetVersion == "" {
		o.NetVersion = "11111"
	}
	c := &Chain{rng: rand.New(rand.NewPCG(o.Seed, 40)), byID: map[[32]byte]*Block{}, solidDepth: o.SolidDepth, chainID: o.ChainID, netVersion: o.NetVersion}
	mk := func(tag string, i int) Addr {
		h := sha256.Sum256(fmt.Appendf(nil, "%s-%d-%d", tag, o.Seed, i))
		return Addr(h[:20])
	}
	c.generated = o.Accounts
	for i := range o.Accounts {
		c.Accounts = append(c.Accounts, mk("account", i))
	}
	for i := range o.Tokens {
		c.Tokens = append(c.Tokens, mk("trc20", i))
	}
	for i := range 3 {
		c.Witnesses = append(c.Witnesses, mk("witness", i))
	}
	c.add(nil)
	return c
}

// TokenName, TokenSymbol and TokenDecimals are the metadata of the i-th
// generated TRC-20 contract.
func TokenName(i int) string   { return fmt.Sprintf("Double Token %d", i) }
func TokenSymbol(i int) string { return fmt.Sprintf("DT%d", i) }
func TokenDecimals(i int) int  { return 6 + 6*(i%3) }

// tokenIndex finds a token by its 20-byte hex address (-1: none).
func (c *Chain) tokenIndex(h string) int {
	for i, t := range c.Tokens {
		if hex.EncodeToString(t[:]) == strings.ToLower(h) {
			return i
		}
	}
	return -1
}

// Tip is the active branch's last block.
func (c *Chain) Tip() *Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blocks[len(c.blocks)-1]
}

// Blocks is a copy of the active branch, genesis first.
func (c *Chain) Blocks() []*Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Block(nil), c.blocks...)
}

// Solidified is the highest solidified height.
func (c *Chain) Solidified() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.solidLocked()
}

func (c *Chain) solidLocked() int64 {
	return max(int64(len(c.blocks)-1-c.solidDepth), 0)
}

// Mine appends n blocks of random txs (up to perBlock each).
// The pending txs (the node's pending pool) go into the next block.
func (c *Chain) Mine(n, perBlock int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range n {
		txs := make([]*Tx, c.rng.IntN(perBlock+1))
		for i := range txs {
			txs[i] = c.randomTx()
		}
		c.add(append(c.pending, txs...))
		c.pending = nil
	}
}

// Pend adds n txs to the pending pool.
func (c *Chain) Pend(n int) []*Tx {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range n {
		c.pending = append(c.pending, c.randomTx())
	}
	return append([]*Tx(nil), c.pending...)
}

// findTx finds a tx of the active branch and its block.
func (c *Chain) findTx(id [32]byte) (*Tx, *Block) {
	for _, b := range c.blocks {
		for _, t := range b.Txs {
			if t.ID == id {
				return t, b
			}
		}
	}
	return nil, nil
}

// Reorg replaces the last depth blocks with depth+1 new ones. Only
// unsolidified blocks may be replaced, as on Tron.
func (c *Chain) Reorg(depth, perBlock int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if depth >= len(c.blocks) || int64(len(c.blocks)-depth) <= c.solidLocked() {
		return fmt.Errorf("trondouble: a reorg of %d blocks reaches the solidified height %d", depth, c.solidLocked())
	}
	c.blocks = c.blocks[:len(c.blocks)-depth]
	c.fork++
	for range depth + 1 {
		txs := make([]*Tx, 1+c.rng.IntN(perBlock))
		for i := range txs {
			txs[i] = c.randomTx()
		}
		c.add(txs)
	}
	return nil
}

func (c *Chain) add(txs []*Tx) {
	b := &Block{Number: int64(len(c.blocks)), Txs: txs, Witness: c.Witnesses[len(c.blocks)%len(c.Witnesses)]}
	b.TimeMs = 1_700_000_000_000 + b.Number*blockIntervalMs + int64(c.fork)
	if b.Number > 0 {
		b.Parent = c.blocks[len(c.blocks)-1].ID
	}
	// A Tron block id is the height (8 bytes, big-endian) followed by the
	// last 24 bytes of the header's hash.
	h := sha256.New()
	h.Write(b.Parent[:])
	_ = binary.Write(h, binary.BigEndian, b.TimeMs)
	for _, t := range txs {
		h.Write(t.ID[:])
	}
	sum := h.Sum(nil)
	binary.BigEndian.PutUint64(b.ID[:8], uint64(b.Number))
	copy(b.ID[8:], sum[8:])
	c.blocks = append(c.blocks, b)
	c.byID[b.ID] = b
}

// stakeTx draws a Stake 2.0 tx: a freeze, an unfreeze, a delegation or
// its undoing (to another account), or a withdrawal of expired unfreezes
// or of voting rewards.
func (c *Chain) stakeTx(t *Tx, v map[string]any, acct func() Addr) {
	t.Amount = 1_000_000 * (1 + c.rng.Int64N(100))
	switch c.rng.IntN(8) {
	case 6, 7:
		t.Kind = KindFreezeV1
		if c.rng.IntN(2) == 0 {
			t.Kind = KindUnfreezeV1
		} else {
			v["frozen_balance"], v["frozen_duration"] = t.Amount, 3
		}
		// BANDWIDTH, the resource enum's zero, is left out of java-tron's JSON.
		if c.rng.IntN(2) == 0 {
			to := acct()
			t.To = &to
			v["receiver_address"] = to.Hex41()
		}
		if t.Kind == KindUnfreezeV1 {
			t.Withdrawn = t.Amount
		}
	case 0:
		t.Kind = KindFreeze
		v["frozen_balance"], v["resource"] = t.Amount, "ENERGY"
	case 1:
		t.Kind = KindUnfreeze
		v["unfreeze_balance"] = t.Amount // resource BANDWIDTH: left out
	case 2, 3:
		to := acct()
		t.Kind, t.To = KindDelegate, &to
		if c.rng.IntN(2) == 0 {
			t.Kind = KindUndelegate
		}
		v["receiver_address"], v["balance"], v["resource"] = to.Hex41(), t.Amount, "ENERGY"
	case 4:
		t.Kind, t.Withdrawn = KindWithdrawExpire, t.Amount
	default:
		t.Kind, t.Withdrawn = KindWithdrawReward, t.Amount/100
	}
}

// accountTx draws a TRC-10 transfer, the creation of a new account or
// of a contract (which fails now and then).
func (c *Chain) accountTx(t *Tx, v map[string]any, acct func() Addr) {
	if c.rng.IntN(3) == 0 {
		var ca Addr
		for i := range ca {
			ca[i] = byte(c.rng.UintN(256))
		}
		t.Kind, t.Created, t.Failed, t.Fee = KindCreateContract, &ca, c.rng.IntN(4) == 0, 10_000_000
		v["new_contract"] = map[string]any{"bytecode": "6080604052", "name": "Double", "origin_address": t.Owner.Hex41(),
			"consume_user_resource_percent": 100, "origin_energy_limit": 10_000_000}
		return
	}
	if c.rng.IntN(2) == 0 {
		to := acct()
		t.Kind, t.To, t.Amount = KindTRC10, &to, 1+c.rng.Int64N(1000)
		v["asset_name"] = hex.EncodeToString([]byte(TRC10Asset))
		v["to_address"], v["amount"] = to.Hex41(), t.Amount
		return
	}
	var fresh Addr
	for i := range fresh {
		fresh[i] = byte(c.rng.UintN(256))
	}
	c.Accounts = append(c.Accounts, fresh)
	t.Kind, t.To, t.Fee = KindCreateAcct, &fresh, 1_100_000
	v["account_address"] = fresh.Hex41()
}

// randomTx draws one tx; about one call in five fails.
func (c *Chain) randomTx() *Tx {
	acct := func() Addr { return c.Accounts[c.rng.IntN(len(c.Accounts))] }
	t := &Tx{Owner: acct()}
	v := map[string]any{"owner_address": t.Owner.Hex41()}
	switch r := c.rng.IntN(10); {
	case r < 4:
		to := acct()
		t.Kind, t.To, t.Amount = KindTransfer, &to, 1+c.rng.Int64N(5_000_000)
		v["to_address"], v["amount"] = to.Hex41(), t.Amount
		t.Fee = 0
	case r < 7:
		tok := c.Tokens[c.rng.IntN(len(c.Tokens))]
		t.Kind, t.To, t.Token, t.TokenTo = KindTrigger, &tok, &tok, acct()
		t.Amount = 1 + c.rng.Int64N(1e9)
		t.Failed = c.rng.IntN(5) == 0
		v["contract_address"] = tok.Hex41()
		v["data"] = transferMethod + word(t.TokenTo[:]) + word(big64(t.Amount))
		t.Fee = 345_000 + c.rng.Int64N(1_000_000)
		if c.rng.IntN(2) == 0 { // with TRX, which the contract passes on
			fwd := acct()
			t.CallValue, t.InternalTo = 1+c.rng.Int64N(1_000_000), &fwd
			v["call_value"] = t.CallValue
		}
	case r < 8:
		c.stakeTx(t, v, acct)
	case r < 9:
		w := c.Witnesses[c.rng.IntN(len(c.Witnesses))]
		t.Kind, t.Amount = KindVote, 1+c.rng.Int64N(50)
		v["votes"] = []map[string]any{{"vote_address": w.Hex41(), "vote_count": t.Amount}}
	default:
		c.accountTx(t, v, acct)
	}
	t.Raw = map[string]any{
		"contract": []map[string]any{{
			"parameter": map[string]any{"value": v, "type_url": "type.googleapis.com/protocol." + t.Kind},
			"type":      t.Kind,
		}},
		"ref_block_bytes": fmt.Sprintf("%04x", c.rng.UintN(1<<16)),
		"ref_block_hash":  fmt.Sprintf("%016x", c.rng.Uint64()),
		"expiration":      1_700_000_060_000 + int64(len(c.blocks))*blockIntervalMs,
		"timestamp":       1_700_000_000_000 + int64(len(c.blocks))*blockIntervalMs,
	}
	if t.Kind == KindTrigger {
		t.Raw["fee_limit"] = int64(100_000_000)
	}
	// java-tron's txID is the SHA-256 of the protobuf raw_data; the double
	// hashes its JSON (and a counter, so equal contracts differ).
	raw, _ := json.Marshal(t.Raw)
	t.ID = sha256.Sum256(append(raw, fmt.Sprint(c.rng.Uint64())...))
	return t
}

func word(b []byte) string {
	var w [32]byte
	copy(w[32-len(b):], b)
	return hex.EncodeToString(w[:])
}

func big64(v int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	return b[:]
}
