package ltcregtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/btcsuite/btcd/address/v2/bech32"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/tools/regtest"
)

// The chain is generated with litecoind's own wallet (not tools/chaingen):
// chaingen builds blocks with btcd's libraries, which cannot make MWEB
// extension blocks, HogEx txs or MWEB outputs; litecoind's wallet and
// miner can, and Ledger recomputes the oracle from the node's decoding.
// Wallet keys are random, so each generated chain differs: tests read
// addresses and txids from the Scenario, never from constants.

// MWEBHeight is the first block with an MWEB extension on regtest.
const MWEBHeight = 432

// Wallet names: W pays and mines; MW holds MWEB coins only, so that all
// its sends to canonical addresses are peg-outs.
const (
	W  = "w"
	MW = "mw"
)

// Scenario records what Generate did.
type Scenario struct {
	// Addresses by script kind: p2pkh, p2sh-p2wpkh, p2wpkh, p2sh-multisig,
	// p2sh-p2wsh-multisig, p2wsh-multisig, p2tr.
	Addresses map[string][]string `json:"addresses"`
	// MWEBAddresses are MWEB (stealth) addresses of wallet MW.
	MWEBAddresses []string `json:"mwebAddresses"`
	PegIns        []string `json:"pegIns"`   // txids of canonical txs with a peg-in output
	PegOuts       []string `json:"pegOuts"`  // MWEB txids of peg-outs (their outputs are in the HogEx)
	OpReturn      []string `json:"opReturn"` // txids with an OP_RETURN output
	// Spends are txids spending an output of each script kind (key: kind).
	Spends    map[string]string `json:"spends"`
	TipHeight int32             `json:"tipHeight"`
	TipHash   string            `json:"tipHash"`
}

const scenarioFile = "scenario.json"

// Generate runs the scenario on a fresh node: every script kind received
// and spent (P2TR received only: the wallet of 0.21 cannot sign it),
// OP_RETURN, coinbases to P2PKH and P2WPKH, MWEB activated at height 432
// by a waiting peg-in, then more peg-ins, peg-outs to canonical addresses
// and MWEB-only txs. The node's mempool is empty at the end. The scenario
// is also written to the node's directory (see LoadScenario).
func Generate(ctx context.Context, n *Node) (*Scenario, error) {
	g := &gen{ctx: ctx, n: n, w: n.Wallet(W), mw: n.Wallet(MW),
		sc: &Scenario{Addresses: map[string][]string{}, Spends: map[string]string{}}}
	steps := []func() error{g.wallets, g.mineMature, g.fundKinds, g.spendKinds, g.activateMWEB, g.mwebTraffic}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("ltcregtest: generate: %w\n%s", err, n.LogTail(10))
		}
	}
	h, hash, err := n.BestBlock(ctx)
	if err != nil {
		return nil, fmt.Errorf("ltcregtest: generate: %w", err)
	}
	g.sc.TipHeight, g.sc.TipHash = h, hash
	data, err := json.MarshalIndent(g.sc, "", " ")
	if err != nil {
		return nil, fmt.Errorf("ltcregtest: generate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(n.Dir, scenarioFile), data, 0o644); err != nil {
		return nil, fmt.Errorf("ltcregtest: generate: %w", err)
	}
	return g.sc, nil
}

// LoadScenario reads the scenario Generate wrote into a node directory.
func LoadScenario(dir string) (*Scenario, error) {
	data, err := os.ReadFile(filepath.Join(dir, scenarioFile))
	if err != nil {
		return nil, fmt.Errorf("ltcregtest: %w", err)
	}
	var sc Scenario
	if err := json.Unmarshal(data, &sc); err != nil {
		return nil, fmt.Errorf("ltcregtest: %s: %w", scenarioFile, err)
	}
	return &sc, nil
}

type gen struct {
	ctx   context.Context
	n     *Node
	w, mw *regtest.Client
	sc    *Scenario
	miner []string // coinbase addresses, used in turn
	turn  int
}

func (g *gen) wallets() error {
	for _, name := range []string{W, MW} {
		if _, err := g.n.Call(g.ctx, "createwallet", name); err != nil {
			return fmt.Errorf("createwallet %s: %w", name, err)
		}
	}
	for _, typ := range []string{"legacy", "bech32"} {
		a, err := g.newAddress(g.w, typ)
		if err != nil {
			return err
		}
		g.miner = append(g.miner, a)
	}
	return nil
}

func (g *gen) newAddress(c *regtest.Client, typ string) (string, error) {
	var a string
	if err := c.CallResult(g.ctx, &a, "getnewaddress", "", typ); err != nil {
		return "", fmt.Errorf("getnewaddress %s: %w", typ, err)
	}
	return a, nil
}

// mine mines count blocks in at most two batches, the coinbases paying the
// scenario's miner addresses in turn, and returns their hashes.
func (g *gen) mine(count int) ([]string, error) {
	var hashes []string
	for count > 0 {
		batch := max(1, count/2)
		addr := g.miner[g.turn%len(g.miner)]
		g.turn++
		var hs []string
		if err := g.n.CallResult(g.ctx, &hs, "generatetoaddress", batch, addr); err != nil {
			return nil, fmt.Errorf("generatetoaddress: %w", err)
		}
		hashes = append(hashes, hs...)
		count -= batch
	}
	return hashes, nil
}

func (g *gen) mineMature() error {
	_, err := g.mine(101)
	return err
}

// fundKinds makes addresses of every kind and pays each of them, with an
// OP_RETURN tx, in a few blocks.
func (g *gen) fundKinds() error {
	for _, typ := range []string{"legacy", "p2sh-segwit", "bech32"} {
		kind := map[string]string{"legacy": "p2pkh", "p2sh-segwit": "p2sh-p2wpkh", "bech32": "p2wpkh"}[typ]
		for i := 0; i < 8; i++ {
			a, err := g.newAddress(g.w, typ)
			if err != nil {
				return err
			}
			g.sc.Addresses[kind] = append(g.sc.Addresses[kind], a)
		}
		ms, err := g.multisig(typ)
		if err != nil {
			return err
		}
		kind = map[string]string{"legacy": "p2sh-multisig", "p2sh-segwit": "p2sh-p2wsh-multisig", "bech32": "p2wsh-multisig"}[typ]
		g.sc.Addresses[kind] = append(g.sc.Addresses[kind], ms)
	}
	for i := 0; i < 2; i++ {
		a, err := taprootAddress(fmt.Sprintf("ltcregtest-p2tr-%d", i))
		if err != nil {
			return err
		}
		g.sc.Addresses["p2tr"] = append(g.sc.Addresses["p2tr"], a)
	}
	for round := 0; round < 3; round++ {
		amounts := map[string]string{}
		k := 0
		for _, kind := range sortedKinds(g.sc.Addresses) {
			for _, a := range g.sc.Addresses[kind] {
				k++
				amounts[a] = fmt.Sprintf("%d.%08d", 1+round, k*1_000_003)
			}
		}
		var txid string
		if err := g.w.CallResult(g.ctx, &txid, "sendmany", "", amounts); err != nil {
			return fmt.Errorf("sendmany: %w", err)
		}
		op, err := g.opReturn(fmt.Sprintf("ltcregtest round %d", round))
		if err != nil {
			return err
		}
		g.sc.OpReturn = append(g.sc.OpReturn, op)
		if _, err := g.mine(1); err != nil {
			return err
		}
	}
	return nil
}

// multisig adds a 2-of-3 address of the given type made of three new wallet
// keys (so the wallet can spend from it).
func (g *gen) multisig(typ string) (string, error) {
	var keys []string
	for i := 0; i < 3; i++ {
		a, err := g.newAddress(g.w, "legacy")
		if err != nil {
			return "", err
		}
		var info struct {
			PubKey string `json:"pubkey"`
		}
		if err := g.w.CallResult(g.ctx, &info, "getaddressinfo", a); err != nil {
			return "", fmt.Errorf("getaddressinfo: %w", err)
		}
		keys = append(keys, info.PubKey)
	}
	var res struct {
		Address string `json:"address"`
	}
	if err := g.w.CallResult(g.ctx, &res, "addmultisigaddress", 2, keys, "", typ); err != nil {
		return "", fmt.Errorf("addmultisigaddress %s: %w", typ, err)
	}
	return res.Address, nil
}

// opReturn sends a wallet-funded tx with an OP_RETURN output carrying text.
func (g *gen) opReturn(text string) (string, error) {
	change, err := g.newAddress(g.w, "bech32")
	if err != nil {
		return "", err
	}
	outs := []map[string]any{{"data": hex.EncodeToString([]byte(text))}, {change: "0.5"}}
	return g.fundSignSend([]map[string]any{}, outs)
}

// fundSignSend completes a tx with wallet inputs and change, signs and
// sends it.
func (g *gen) fundSignSend(ins []map[string]any, outs []map[string]any) (string, error) {
	var raw string
	if err := g.w.CallResult(g.ctx, &raw, "createrawtransaction", ins, outs); err != nil {
		return "", fmt.Errorf("createrawtransaction: %w", err)
	}
	var funded struct {
		Hex string `json:"hex"`
	}
	if err := g.w.CallResult(g.ctx, &funded, "fundrawtransaction", raw); err != nil {
		return "", fmt.Errorf("fundrawtransaction: %w", err)
	}
	var signed struct {
		Hex      string `json:"hex"`
		Complete bool   `json:"complete"`
	}
	if err := g.w.CallResult(g.ctx, &signed, "signrawtransactionwithwallet", funded.Hex); err != nil {
		return "", fmt.Errorf("signrawtransactionwithwallet: %w", err)
	}
	if !signed.Complete {
		return "", fmt.Errorf("signrawtransactionwithwallet: incomplete")
	}
	var txid string
	if err := g.n.CallResult(g.ctx, &txid, "sendrawtransaction", signed.Hex); err != nil {
		return "", fmt.Errorf("sendrawtransaction: %w", err)
	}
	return txid, nil
}

// spendKinds spends one output of an address of each kind the wallet can
// sign for, to a fresh P2WPKH address (wallet change added).
func (g *gen) spendKinds() error {
	for _, kind := range sortedKinds(g.sc.Addresses) {
		if kind == "p2tr" {
			continue
		}
		// The wallet's own coin selection may have spent some of them.
		var utxos []struct {
			Txid string `json:"txid"`
			Vout uint32 `json:"vout"`
		}
		if err := g.w.CallResult(g.ctx, &utxos, "listunspent", 1, 9999999, g.sc.Addresses[kind]); err != nil {
			return fmt.Errorf("listunspent: %w", err)
		}
		if len(utxos) == 0 {
			return fmt.Errorf("no utxo of any %s address", kind)
		}
		to, err := g.newAddress(g.w, "bech32")
		if err != nil {
			return err
		}
		txid, err := g.fundSignSend([]map[string]any{{"txid": utxos[0].Txid, "vout": utxos[0].Vout}},
			[]map[string]any{{to: "2.5"}})
		if err != nil {
			return fmt.Errorf("spend %s: %w", kind, err)
		}
		g.sc.Spends[kind] = txid
	}
	_, err := g.mine(1)
	return err
}

// activateMWEB mines up to height 431 and, with a peg-in waiting in the
// mempool (litecoind cannot mine the first MWEB block without one), the
// first MWEB block.
func (g *gen) activateMWEB() error {
	h, _, err := g.n.BestBlock(g.ctx)
	if err != nil {
		return err
	}
	if h >= MWEBHeight-1 {
		return fmt.Errorf("scenario is at height %d before MWEB activation", h)
	}
	if _, err := g.mine(int(MWEBHeight - 1 - h)); err != nil {
		return err
	}
	for i := 0; i < 2; i++ {
		a, err := g.newAddress(g.mw, "mweb")
		if err != nil {
			return err
		}
		g.sc.MWEBAddresses = append(g.sc.MWEBAddresses, a)
	}
	if err := g.pegIn(g.sc.MWEBAddresses[0], "20"); err != nil {
		return err
	}
	_, err = g.mine(1)
	return err
}

func (g *gen) pegIn(to, amount string) error {
	var txid string
	if err := g.w.CallResult(g.ctx, &txid, "sendtoaddress", to, amount); err != nil {
		return fmt.Errorf("peg-in: %w", err)
	}
	g.sc.PegIns = append(g.sc.PegIns, txid)
	return nil
}

// mwebTraffic makes blocks with peg-ins, peg-outs to canonical addresses
// of several kinds, an MWEB-only tx and canonical txs side by side.
func (g *gen) mwebTraffic() error {
	for round := 0; round < 3; round++ {
		if err := g.pegIn(g.sc.MWEBAddresses[round%2], fmt.Sprintf("%d.5", 3+round)); err != nil {
			return err
		}
		kind := []string{"p2pkh", "p2wpkh", "p2sh-p2wpkh"}[round]
		var txid string
		if err := g.mw.CallResult(g.ctx, &txid, "sendtoaddress", g.sc.Addresses[kind][1], fmt.Sprintf("1.%d", round+1)); err != nil {
			return fmt.Errorf("peg-out: %w", err)
		}
		g.sc.PegOuts = append(g.sc.PegOuts, txid)
		if round == 1 {
			// MWEB to MWEB: no canonical trace but the HogEx's value.
			if err := g.mw.CallResult(g.ctx, &txid, "sendtoaddress", g.sc.MWEBAddresses[0], "0.7"); err != nil {
				return fmt.Errorf("mweb send: %w", err)
			}
		}
		var plain string
		if err := g.w.CallResult(g.ctx, &plain, "sendtoaddress", g.sc.Addresses["p2wsh-multisig"][0], "0.3"); err != nil {
			return fmt.Errorf("sendtoaddress: %w", err)
		}
		if _, err := g.mine(1); err != nil {
			return err
		}
	}
	_, err := g.mine(2)
	return err
}

// taprootAddress is the regtest P2TR address (key path only, BIP86 tweak)
// of a key derived from seed.
func taprootAddress(seed string) (string, error) {
	sum := sha256.Sum256([]byte(seed))
	_, pub := btcec.PrivKeyFromBytes(sum[:])
	out := txscript.ComputeTaprootKeyNoScript(pub)
	prog, err := bech32.ConvertBits(schnorr.SerializePubKey(out), 8, 5, true)
	if err != nil {
		return "", fmt.Errorf("taproot address: %w", err)
	}
	a, err := bech32.EncodeM("rltc", append([]byte{1}, prog...))
	if err != nil {
		return "", fmt.Errorf("taproot address: %w", err)
	}
	return a, nil
}

func sortedKinds(m map[string][]string) []string {
	kinds := []string{"p2pkh", "p2sh-p2wpkh", "p2wpkh", "p2sh-multisig", "p2sh-p2wsh-multisig", "p2wsh-multisig", "p2tr"}
	out := kinds[:0:0]
	for _, k := range kinds {
		if len(m[k]) > 0 {
			out = append(out, k)
		}
	}
	return out
}
