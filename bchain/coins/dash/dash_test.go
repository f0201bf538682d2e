package dash

import (
	"encoding/hex"
	"testing"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// parserFor is the registered network's parser as Dash's own type.
func parserFor(t *testing.T, name string) *Parser { return btctest.Parser(t, name).(*Parser) }

func TestParamsDash(t *testing.T) {
	cases := []struct {
		name, shortcut, genesis string
		slip44                  uint32
		p2pkh, p2sh             string // real addresses and their scripts
		p2pkhScript, p2shScript string
	}{
		{"Dash", "DASH", "00000ffd590b1485b3caadc19b22e6379c733355108f107a430458cdf3407ab6", 5,
			"XkycBX1ykVXXs92pAi6ZQwZPEre9kSHHKH", "", "76a91470dcef2a22575d7a8f0779fb1d6cdd48135bd22788ac", ""},
		{"Dash Testnet", "tDASH", "00000bafbc94add76cb75e2ec92894837288a481e5c005f6563d91623bf8bc2c", 1,
			"yZw2EYuVkTNUzUqd7mfXRNhCMReonL99tu", "", "76a914955410003527bf2b360a7a390b9ff14b9106c63288ac", ""},
	}
	for _, c := range cases {
		n, ok := btc.NetworkFor(c.name)
		if !ok {
			t.Fatalf("%s not registered", c.name)
		}
		if n.Shortcut != c.shortcut || n.Slip44 != c.slip44 || n.Params.GenesisHash.String() != c.genesis {
			t.Errorf("%s: shortcut %s slip44 %d genesis %s", c.name, n.Shortcut, n.Slip44, n.Params.GenesisHash)
		}
		if !n.P2P.NoWitness {
			t.Errorf("%s: P2P must not ask for witness blocks", c.name)
		}
		p := parserFor(t, c.name)
		desc, err := p.AddrDescFromAddress(c.p2pkh)
		if err != nil || hex.EncodeToString(desc) != c.p2pkhScript {
			t.Errorf("%s: %s -> %x, %v", c.name, c.p2pkh, desc, err)
		}
		addrs, ok, err := p.AddressesFromAddrDesc(desc)
		if err != nil || !ok || len(addrs) != 1 || addrs[0] != c.p2pkh {
			t.Errorf("%s: %x -> %v %v %v", c.name, desc, addrs, ok, err)
		}
		// No SegWit: Bitcoin's bech32 addresses are refused and witness
		// programs have no address.
		if _, err := p.AddrDescFromAddress("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"); err == nil {
			t.Errorf("%s accepts a bech32 address", c.name)
		}
		wpkh, _ := hex.DecodeString("0014751e76e8199196d454941c45d1b3a323f1433bd6")
		if a, _ := p.OutputAddresses(wpkh); len(a) != 0 {
			t.Errorf("%s: witness program shown as %v", c.name, a)
		}
	}
	// The other network's addresses are refused.
	if _, err := parserFor(t, "Dash").AddrDescFromAddress("yZw2EYuVkTNUzUqd7mfXRNhCMReonL99tu"); err == nil {
		t.Error("Dash accepts a testnet address")
	}
}

func TestTxType(t *testing.T) {
	for v, want := range map[uint32]uint16{1: 0, 2: 0, 3: 0, 0x00050003: 5, 0x00010003: 1, 0x00050002: 0, 0x0005ffff: 0} {
		if got := txType(int32(v)); got != want { //nolint:gosec // test values
			t.Errorf("txType(%#x) = %d, want %d", v, got, want)
		}
	}
}
