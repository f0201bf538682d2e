package trondouble

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/btcsuite/btcd/address/v2/base58"
)

// The double's account state, derived from the active branch's txs by
// the double's own simple rules (not java-tron's bookkeeping): what a
// follower reads back from /wallet/getaccount, getaccountresource,
// getReward and eth_getBalance, and what tests compare answers with.

// InitialBalance is the sun every generated account starts with.
const InitialBalance = 1_000_000_000_000

// InitialTokens is what every address holds of each TRC-20 before the
// chain's transfers (minted before genesis: no Transfer log, so the
// index, which counts logs, does not know it; balanceOf does).
const InitialTokens = 1_000_000_000_000_000

// Facts is one account's state.
type Facts struct {
	Balance      int64 // sun
	FrozenEnergy int64 // Stake 2.0 ENERGY stakes
	Unfrozen     []Unfreeze
	Votes        map[Addr]int64    // the last vote tx's votes
	Reward       int64             // unclaimed voting reward
	Tokens       map[Addr]*big.Int // balanceOf of the tokens it moved
}

// Unfreeze is one Stake 2.0 unfreeze waiting to expire.
type Unfreeze struct {
	Amount     int64
	ExpireTime int64 // ms
}

// unfreezeDelayMs is how long an unfreeze waits (14 days, as mainnet).
const unfreezeDelayMs = 14 * 24 * 3600 * 1000

// AccountFacts is a's state on the active branch.
func (c *Chain) AccountFacts(a Addr) Facts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.factsLocked(a)
}

func (c *Chain) factsLocked(a Addr) Facts {
	f := Facts{Tokens: map[Addr]*big.Int{}}
	for _, acct := range c.Accounts[:min(len(c.Accounts), c.generated)] {
		if acct == a {
			f.Balance = InitialBalance
		}
	}
	tok := func(t Addr, v int64) {
		if f.Tokens[t] == nil {
			f.Tokens[t] = big.NewInt(InitialTokens)
		}
		f.Tokens[t].Add(f.Tokens[t], big.NewInt(v))
	}
	for _, b := range c.blocks {
		for _, t := range b.Txs {
			if t.Owner == a {
				f.Balance -= t.Fee
			}
			if t.Failed {
				continue
			}
			switch {
			case t.Kind == KindTransfer && t.Owner == a:
				f.Balance -= t.Amount
			case t.Kind == KindTransfer && *t.To == a:
				f.Balance += t.Amount
			}
			if t.CallValue > 0 && t.Owner == a {
				f.Balance -= t.CallValue
			}
			if t.InternalTo != nil && *t.InternalTo == a {
				f.Balance += t.CallValue
			}
			if t.Token != nil {
				if t.Owner == a {
					tok(*t.Token, -t.Amount)
				}
				if t.TokenTo == a {
					tok(*t.Token, t.Amount)
				}
			}
			if t.Owner != a {
				continue
			}
			switch t.Kind {
			case KindFreeze:
				f.FrozenEnergy += t.Amount
				f.Balance -= t.Amount
			case KindUnfreeze:
				f.Unfrozen = append(f.Unfrozen, Unfreeze{Amount: t.Amount, ExpireTime: b.TimeMs + unfreezeDelayMs})
			case KindVote:
				f.Votes = map[Addr]int64{}
				for _, w := range t.VotedFor() {
					f.Votes[w] += t.Amount
				}
				f.Reward += 1000 * t.Amount
			case KindWithdrawReward:
				f.Reward = 0
			}
		}
	}
	return f
}

// VotedFor is the witness a vote tx names.
func (t *Tx) VotedFor() []Addr {
	if t.Kind != KindVote {
		return nil
	}
	v := t.Raw["contract"].([]map[string]any)[0]["parameter"].(map[string]any)["value"].(map[string]any)
	var out []Addr
	for _, vt := range v["votes"].([]map[string]any) {
		raw, _ := hex.DecodeString(strings.TrimPrefix(vt["vote_address"].(string), "41"))
		out = append(out, Addr(raw))
	}
	return out
}

// parseAddr reads the address of a request: 41-prefixed hex, or
// base58check with visible=true (the checksum is not verified here).
func parseAddr(v any) (Addr, bool) {
	s, _ := v.(string)
	if len(s) == 42 {
		if raw, err := hex.DecodeString(strings.TrimPrefix(s, "41")); err == nil && len(raw) == 20 {
			return Addr(raw), true
		}
	}
	if raw := base58.Decode(s); len(raw) == 25 && raw[0] == 0x41 {
		return Addr(raw[1:21]), true
	}
	return Addr{}, false
}

// accountAnswers renders getaccount, getaccountresource and getReward.
func (c *Chain) accountAnswer(name string, a Addr) any {
	f := c.factsLocked(a)
	switch name {
	case "getaccount":
		if f.Balance == 0 && f.FrozenEnergy == 0 && len(f.Votes) == 0 {
			return map[string]any{} // java-tron: {} for an account that does not exist
		}
		acct := map[string]any{"address": a.Hex41(), "balance": f.Balance}
		if f.FrozenEnergy > 0 {
			acct["frozenV2"] = []map[string]any{{}, {"type": "ENERGY", "amount": f.FrozenEnergy}, {"type": "TRON_POWER"}}
		}
		var un []map[string]any
		for _, u := range f.Unfrozen {
			un = append(un, map[string]any{"unfreeze_amount": u.Amount, "unfreeze_expire_time": u.ExpireTime})
		}
		if un != nil {
			acct["unfrozenV2"] = un
		}
		var votes []map[string]any
		for w, n := range f.Votes {
			votes = append(votes, map[string]any{"vote_address": w.Hex41(), "vote_count": n})
		}
		if votes != nil {
			acct["votes"] = votes
		}
		return acct
	case "getaccountresource":
		var used int64
		for _, n := range f.Votes {
			used += n
		}
		return map[string]any{"freeNetLimit": 600, "TotalNetLimit": 43_200_000_000, "TotalNetWeight": 26_000_000_000,
			"EnergyLimit": f.FrozenEnergy / 1_000_000 * 10, "TotalEnergyLimit": 180_000_000_000, "TotalEnergyWeight": 19_000_000_000,
			"tronPowerLimit": f.FrozenEnergy / 1_000_000, "tronPowerUsed": used}
	default: // getReward
		return map[string]any{"reward": f.Reward}
	}
}

// Broadcast is what a test signs for the double: a TRX transfer. The
// double's "signed tx" is this JSON (java-tron's is a protobuf the double
// does not decode); its txid is the SHA-256 of the bytes.
type Broadcast struct {
	Owner, To Addr
	Amount    int64
}

// Raw is the bytes a client broadcasts (as hex) for b.
func (b Broadcast) Raw() []byte {
	raw, _ := json.Marshal(map[string]any{"owner": b.Owner.Hex41(), "to": b.To.Hex41(), "amount": b.Amount})
	return raw
}

// broadcast adds a broadcast tx to the pending pool; anything else is
// refused as java-tron refuses a bad signature.
func (c *Chain) broadcast(txHex string) map[string]any {
	refuse := map[string]any{"result": false, "code": "SIGERROR", "message": hex.EncodeToString([]byte("Validate signature error"))}
	raw, err := hex.DecodeString(txHex)
	if err != nil {
		return refuse
	}
	var m struct {
		Owner, To string
		Amount    int64
	}
	if json.Unmarshal(raw, &m) != nil || m.Amount <= 0 {
		return refuse
	}
	owner, ok1 := parseAddr(m.Owner)
	to, ok2 := parseAddr(m.To)
	if !ok1 || !ok2 {
		return refuse
	}
	t := &Tx{Kind: KindTransfer, Owner: owner, To: &to, Amount: m.Amount, ID: sha256.Sum256(raw)}
	t.Raw = map[string]any{
		"contract": []map[string]any{{
			"parameter": map[string]any{"value": map[string]any{"owner_address": owner.Hex41(), "to_address": to.Hex41(), "amount": m.Amount},
				"type_url": "type.googleapis.com/protocol." + KindTransfer},
			"type": KindTransfer,
		}},
		"ref_block_bytes": "0000", "ref_block_hash": "0000000000000000",
		"expiration": 1_700_000_060_000 + int64(len(c.blocks))*blockIntervalMs, "timestamp": 1_700_000_000_000 + int64(len(c.blocks))*blockIntervalMs,
	}
	for _, p := range c.pending {
		if p.ID == t.ID {
			return map[string]any{"result": false, "code": "DUP_TRANSACTION_ERROR", "message": hex.EncodeToString([]byte("dup transaction"))}
		}
	}
	c.pending = append(c.pending, t)
	return map[string]any{"result": true, "txid": fmt.Sprintf("%x", t.ID)}
}
