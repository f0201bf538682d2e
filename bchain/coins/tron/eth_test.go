package tron

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/trondouble"
)

// An answer over the bound is an explicit error, not a cut answer that
// then fails to decode (or decodes as something else); one at the bound
// is read whole.
func TestAnswerOverBoundRefused(t *testing.T) {
	maxAnswer.Store(64)
	t.Cleanup(func() { maxAnswer.Store(defaultMaxAnswer) })
	body := `{"txId":["` + strings.Repeat("ab", 32) + `"]}` // 74 bytes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
	defer srv.Close()
	n := nodeAt(t, srv.URL)
	if _, err := n.MempoolTxids(context.Background()); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a %d-byte answer over a %d-byte bound: %v", len(body), maxAnswer.Load(), err)
	}
	maxAnswer.Store(int64(len(body)))
	if ids, err := n.MempoolTxids(context.Background()); err != nil || len(ids) != 1 {
		t.Fatalf("an answer at the bound: %v %v", ids, err)
	}
}

// The account reads and broadcast against the double: balances and
// token balances equal its facts, a refused broadcast carries the node's
// decoded reason, an accepted one is pending and then read as such.
func TestAccountReadsAndBroadcast(t *testing.T) {
	n, c, _ := doubleChain(t, trondouble.Options{Seed: 9, Accounts: 5, Tokens: 2}, 30, 6)
	ctx := context.Background()
	for _, a := range c.Accounts[:5] {
		f := c.AccountFacts(a)
		b, err := n.Balance(ctx, a[:], bchain.EthLatest)
		if err != nil || b.Int64() != max(f.Balance, 0) {
			t.Errorf("balance of %s: %v %v, want %d", EncodeAddress(a[:]), b, err, f.Balance)
		}
		for _, tok := range c.Tokens {
			want := f.Tokens[tok]
			got, err := n.TokenBalance(ctx, a[:], tok[:])
			if want != nil && want.Sign() >= 0 && (err != nil || got.Cmp(want) != 0) {
				t.Errorf("token balance: %v %v, want %v", got, err, want)
			}
		}
	}
	// java-tron reads the latest state only: a past block is refused.
	if b, err := n.Balance(ctx, c.Accounts[0][:], bchain.EthBlockTag(3)); !errors.Is(err, bchain.ErrUnsupported) {
		t.Errorf("balance at block 3: %v %v, want ErrUnsupported", b, err)
	}
	_, err := n.SendRawTx(ctx, []byte("junk"))
	var re *bchain.RPCError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "SIGERROR Validate signature error") {
		t.Fatalf("refused broadcast: %v", err)
	}
	raw := trondouble.Broadcast{Owner: c.Accounts[0], To: c.Accounts[1], Amount: 5}.Raw()
	h, err := n.SendRawTx(ctx, raw)
	if err != nil || h != bchain.Hash(sha256.Sum256(raw)) {
		t.Fatalf("broadcast: %s %v", h, err)
	}
	tx, err := n.Tx(ctx, h)
	if err != nil || !tx.BlockHash.IsZero() || tx.Receipt != nil || tx.Value.Int64() != 5 || len(tx.ChainExtra) == 0 {
		t.Fatalf("pending broadcast tx: %+v %v", tx, err)
	}
	c.Mine(1, 0)
	tx, err = n.Tx(ctx, h)
	if tip := c.Tip(); err != nil || tx.BlockHash != bchain.Hash(tip.ID) || tx.BlockHeight != uint32(tip.Number) || tx.Receipt == nil {
		t.Fatalf("mined broadcast tx: %+v %v", tx, err)
	}
}
