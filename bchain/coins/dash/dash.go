// Package dash registers Dash's networks: Bitcoin's block and tx encoding
// without SegWit, plus DIP2 special transactions (a type in the upper 16
// bits of a version 3 tx and an extra payload after the locktime).
//
// Dash identifies blocks by the X11 hash of the 80-byte header. No X11
// implementation is available to this project, so the parser cannot
// recompute block ids: a parsed block's Hash is left zero and the backend
// takes the id the node was asked for (the node vouches for it by serving
// the block under that hash). For the same reason block downloads over P2P
// (p2p_address) are refused for Dash: the peer's answer could not be
// matched to the request. The tests recompute real block ids with Dash's
// JavaScript X11 (x11_test.go).
package dash

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Network magics of Dash Core's chainparams.
const (
	mainnetMagic wire.BitcoinNet = 0xbd6b0cbf
	testnetMagic wire.BitcoinNet = 0xffcae2ce
)

// MainNetParams and TestNetParams are Dash's address and key versions on
// top of Bitcoin's parameters (which the parser uses only for those).
var (
	MainNetParams = *btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{
		Name: "dash-mainnet", Net: mainnetMagic,
		Genesis:    "00000ffd590b1485b3caadc19b22e6379c733355108f107a430458cdf3407ab6",
		PubKeyHash: 76, ScriptHash: 16, PrivateKey: 204, // X..., 7...; no SegWit
		HDPublic: [4]byte{0x02, 0xfe, 0x52, 0xcc}, HDPrivate: [4]byte{0x02, 0xfe, 0x52, 0xf8}, // drkp, drkv
		HDCoinType: 5,
	})
	TestNetParams = *btc.DeriveParams(chaincfg.TestNet3Params, btc.ParamsSpec{
		Name: "dash-testnet", Net: testnetMagic,
		Genesis:    "00000bafbc94add76cb75e2ec92894837288a481e5c005f6563d91623bf8bc2c",
		PubKeyHash: 140, ScriptHash: 19, PrivateKey: 239, // y...; 8... or 9...
		HDCoinType: 1,
	})
)

// Coin names, shortcuts and ports follow Blockbook's dash*.json.
func init() {
	// Registering the networks lets btcd's key code map Dash's extended
	// private key versions to the public ones.
	btc.MustRegisterParams(&MainNetParams, &TestNetParams)
	btc.Register("Dash", btc.Network{
		Params: &MainNetParams, Shortcut: "DASH", Label: "Dash", Slip44: 5,
		PublicPort: 9133, InternalPort: 9033,
		NewParser: newParser, Adjust: adjust, P2P: btc.P2POptions{NoWitness: true}, NoP2P: true,
		MaxBlockWeight: 4 * 2_000_000, // 2 MB blocks, no segwit
	})
	btc.Register("Dash Testnet", btc.Network{
		Params: &TestNetParams, Shortcut: "tDASH", Label: "Dash Testnet", Slip44: 1, Testnet: true,
		PublicPort: 19133, InternalPort: 19033,
		NewParser: newParser, Adjust: adjust, P2P: btc.P2POptions{NoWitness: true}, NoP2P: true,
		MaxBlockWeight: 4 * 2_000_000, // 2 MB blocks, no segwit
	})
}

func newParser(params *chaincfg.Params, _ *bchain.Config) (bchain.UtxoParser, error) {
	return NewParser(params), nil
}

// adjust refuses P2P block downloads and takes block ids from the node, as
// X11 cannot be computed here (see the package comment), and limits
// accounts to the P2PKH keys Dash has.
func adjust(b *bchain.Backend, node *btc.Node, cfg *bchain.Config) error {
	var extra struct {
		P2PAddress string `json:"p2p_address"`
	}
	if err := json.Unmarshal(cfg.Raw, &extra); err != nil {
		return fmt.Errorf("%w: %v", bchain.ErrConfig, err)
	}
	if extra.P2PAddress != "" && extra.P2PAddress != btc.P2POff {
		return fmt.Errorf("%w: p2p_address is not supported for Dash: its X11 block ids cannot be computed here to match a peer's blocks", bchain.ErrConfig)
	}
	b.Chain = &chain{BlockChain: b.Chain, raw: node, parser: b.Utxo}
	b.Xpub = btc.P2PKHAccounts(b.Xpub)
	return nil
}

// chain is the node's BlockChain with Block taking the block id from the
// request instead of hashing the header.
type chain struct {
	bchain.BlockChain
	raw    bchain.RawBlockSource
	parser bchain.UtxoParser
}

// Block fetches a block by its id over RPC and decodes it; the node served
// it under that id, which stands in for recomputing the X11 hash.
func (c *chain) Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	raw, err := c.raw.RawBlock(ctx, hash)
	if err != nil {
		return nil, err
	}
	blk, err := c.parser.ParseBlock(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: block %s: %v", bchain.ErrNodeUnavailable, hash, err)
	}
	blk.Hash = hash
	blk.Height = height
	return blk, nil
}
