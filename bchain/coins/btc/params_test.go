package btc

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
)

// DeriveParams sets what the spec names, keeps the base's value where a
// field is zero, clears the bech32 prefix of a coin without SegWit, and
// leaves the base itself alone.
func TestDeriveParams(t *testing.T) {
	const genesis = "00000ffd590b1485b3caadc19b22e6379c733355108f107a430458cdf3407ab6"
	p := DeriveParams(chaincfg.TestNet3Params, ParamsSpec{
		Name: "coin-test", Net: 0x01020304, Genesis: genesis, PubKeyHash: 140, DefaultPort: "1234",
	})
	base := chaincfg.TestNet3Params
	if p.Name != "coin-test" || p.Net != 0x01020304 || p.GenesisHash.String() != genesis ||
		p.PubKeyHashAddrID != 140 || p.DefaultPort != "1234" {
		t.Errorf("spec not applied: %s %#x %s %d %s", p.Name, uint32(p.Net), p.GenesisHash, p.PubKeyHashAddrID, p.DefaultPort)
	}
	if p.ScriptHashAddrID != base.ScriptHashAddrID || p.PrivateKeyID != base.PrivateKeyID ||
		p.HDPublicKeyID != base.HDPublicKeyID || p.HDCoinType != base.HDCoinType {
		t.Errorf("zero fields changed the base's: %+v", p)
	}
	if p.Bech32HRPSegwit != "" || p.GenesisBlock != nil || p.DNSSeeds != nil || p.Checkpoints != nil {
		t.Errorf("Bitcoin's prefix, genesis block, seeds or checkpoints kept: %q", p.Bech32HRPSegwit)
	}
	if base.Name != "testnet3" || base.Bech32HRPSegwit != "tb" || base.GenesisBlock == nil {
		t.Errorf("base modified: %s %s", base.Name, base.Bech32HRPSegwit)
	}
}
