package eth

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/ethgen"
)

// Multicall on a dev chain: ErrUnsupported before Multicall3 is there
// (remembered by that node for multicall3Recheck, then asked again), then, after its real pre-signed deployment,
// one aggregate3 call pinned to a block: Multicall3's own getBlockNumber()
// and getChainId(), a call to an address without code (success, no
// data) and a reverting one (an unknown selector: failure, no error).
func TestMulticallOnDevChain(t *testing.T) {
	dev := startDev(t)
	ctx := context.Background()
	_, before := devBackend(t, dev, dev.HTTPURL, nil)
	target := bchain.AddrDesc(multicall3Address.Bytes())
	if _, err := before.Multicall(ctx, []bchain.EthMulticall{{Target: target, Data: []byte{0x42, 0xcb, 0xb1, 0x5c}}}, bchain.EthLatest); !errors.Is(err, bchain.ErrUnsupported) {
		t.Fatalf("without Multicall3: %v, want ErrUnsupported", err)
	}
	if err := ethgen.DeployMulticall3(ctx, dev); err != nil {
		t.Fatal(err)
	}
	if ethgen.Multicall3Address != multicall3Address {
		t.Fatalf("the deployment's address %s is not the one read", ethgen.Multicall3Address.Hex())
	}
	// The node that found none keeps that answer for multicall3Recheck,
	// then asks again and finds it.
	if _, err := before.Multicall(ctx, []bchain.EthMulticall{{Target: target, Data: []byte{0x42, 0xcb, 0xb1, 0x5c}}}, bchain.EthLatest); !errors.Is(err, bchain.ErrUnsupported) {
		t.Fatalf("within the recheck interval: %v, want ErrUnsupported (the absent answer kept)", err)
	}
	before.multicall3At.Add(-int64(multicall3Recheck))
	if res, err := before.Multicall(ctx, []bchain.EthMulticall{{Target: target, Data: []byte{0x42, 0xcb, 0xb1, 0x5c}}}, bchain.EthLatest); err != nil || len(res) != 1 || !res[0].Success {
		t.Fatalf("after the recheck interval: %+v, %v; want Multicall3 found", res, err)
	}
	_, n := devBackend(t, dev, dev.HTTPURL, nil)
	head, _ := dev.Head()
	res, err := n.Multicall(ctx, []bchain.EthMulticall{
		{Target: target, Data: []byte{0x42, 0xcb, 0xb1, 0x5c}}, // getBlockNumber()
		{Target: target, Data: []byte{0x34, 0x08, 0xe4, 0x70}}, // getChainId()
		{Target: bchain.AddrDesc(common.Address{0x77}.Bytes()), Data: []byte{1, 2, 3, 4}},
		{Target: target, Data: []byte{0xde, 0xad, 0xbe, 0xef}},
	}, bchain.EthBlockTag(head))
	if err != nil || len(res) != 4 {
		t.Fatalf("multicall: %v %+v", err, res)
	}
	word := func(r bchain.EthMulticallResult) *big.Int { return new(big.Int).SetBytes(r.Data) }
	if !res[0].Success || word(res[0]).Uint64() != head || !res[1].Success || word(res[1]).Cmp(dev.ChainID) != 0 {
		t.Errorf("block number %v %d (want %d), chain id %v %d", res[0].Success, word(res[0]), head, res[1].Success, word(res[1]))
	}
	if !res[2].Success || len(res[2].Data) != 0 || res[3].Success {
		t.Errorf("no-code call %+v, reverting call %+v", res[2], res[3])
	}
	// Pinned to the block before the deployment, the call reads that
	// block's state, where Multicall3 is not: an error, not an empty result.
	res, err = n.Multicall(ctx, []bchain.EthMulticall{{Target: target, Data: []byte{0x42, 0xcb, 0xb1, 0x5c}}}, bchain.EthBlockTag(head-1))
	if err == nil {
		t.Errorf("Multicall3 did not exist at block %d, yet the call answered %+v", head-1, res)
	}
}
