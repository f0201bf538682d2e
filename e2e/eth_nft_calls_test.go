package e2e

// The NFT page of contracts whose tokenURI call fails other than by a
// revert, on the vault chain's geth dev node: one whose code is the
// INVALID opcode, one that runs out of gas (it reads memory 256 MB away).
// The page shows no URI and the node's own message, as for a revert; and,
// last, with the node stopped the page is the explorer's node-down page.

import (
	"context"
	"encoding/hex"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/openexplorer/blockbook/tools/ethgen"
)

// Init code (hand-assembled) returning each contract's runtime code.
var failingContracts = []struct{ name, init, want string }{
	// PUSH1 0xfe PUSH1 0 MSTORE8 PUSH1 1 PUSH1 0 RETURN: the code is 0xfe.
	{"invalid opcode", "60fe60005360016000f3", "invalid opcode"},
	// PUSH6 <PUSH4 0x10000000 MLOAD> PUSH1 0 MSTORE PUSH1 6 PUSH1 26
	// RETURN: the code expands memory to 256 MB, past any gas cap.
	{"out of gas", "656310000000516000526006601af3", "out of gas"},
}

// checkNFTCallFailures deploys the failing contracts and checks their NFT
// pages against the node's own answer to tokenURI; it returns the pages
// and the first contract.
func (c *vaultChain) checkNFTCallFailures(t *testing.T) ([]*htmlPage, common.Address) {
	t.Helper()
	ctx := context.Background()
	addrs := make([]common.Address, len(failingContracts))
	for i, fc := range failingContracts {
		code, err := hex.DecodeString(fc.init)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := c.w.Send(ctx, c.devAcc, nil, code, ethgen.TxOpts{Type: types.DynamicFeeTxType, Gas: 200_000})
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = crypto.CreateAddress(c.devAcc.Addr, tx.Nonce())
	}
	c.commit(t)
	c.e.waitHead(t)
	var pages []*htmlPage
	for i, fc := range failingContracts {
		// tokenURI(1), as the page asks it.
		data := append(common.FromHex("0xc87b56dd"), common.LeftPadBytes(big.NewInt(1).Bytes(), 32)...)
		_, callErr := c.dev.Client().CallContract(ctx, ethereum.CallMsg{To: &addrs[i], Data: data}, nil)
		if callErr == nil || !strings.Contains(callErr.Error(), fc.want) {
			t.Fatalf("%s: the node's tokenURI answer %v, want %q", fc.name, callErr, fc.want)
		}
		p := fetchPage(t, c.e.inst.base, "/nft/"+addrs[i].Hex()+"/1")
		if p.status != 200 {
			t.Errorf("%s: status %d: %s", fc.name, p.status, text(p.doc))
			continue
		}
		if got, want := p.textOf(t, "nft-callerror"), "The call failed: tokenURI: "+callErr.Error(); got != want {
			t.Errorf("%s: %q, want %q", fc.name, got, want)
		}
		if !strings.Contains(p.textOf(t, "nft-uri"), "no URI") || p.byID("nft-name") != nil {
			t.Errorf("%s: uri %q", fc.name, p.textOf(t, "nft-uri"))
		}
		pages = append(pages, p)
	}
	return pages, addrs[0]
}

// checkNFTNodeDown stops the node (the chain's last check): the NFT page
// is the node-down page, 503, without the connection's details.
func (c *vaultChain) checkNFTNodeDown(t *testing.T, contract common.Address) {
	t.Helper()
	c.dev.Stop()
	p := fetchPage(t, c.e.inst.base, "/nft/"+contract.Hex()+"/1")
	if msg := p.textOf(t, "message"); p.status != 503 || !strings.Contains(msg, "not responding") || strings.Contains(msg, "127.0.0.1") {
		t.Errorf("node down: status %d, %q", p.status, msg)
	}
}
