package ethgen

import (
	"context"
	_ "embed"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"

	"github.com/openexplorer/blockbook/tools/gethdev"
)

// Multicall3 is deployed on every chain by one pre-signed transaction
// (a legacy tx without chain id, nonce 0 of its deployer), which is what
// puts it at the same address everywhere; multicall3_tx.hex is that
// transaction, as mds1/multicall publishes it.
var (
	//go:embed multicall3_tx.hex
	multicall3TxHex string

	// Multicall3Address is where the transaction creates Multicall3.
	Multicall3Address = common.HexToAddress("0xcA11bde05977b3631167028862bE2a173976CA11")
	// multicall3Deployer signed it; it needs gas × price (0.1 ether).
	multicall3Deployer = common.HexToAddress("0x05f32b3cc3888453ff71b01135b34ff8e41263f2")
)

// DeployMulticall3 funds the deployer from the dev account and sends the
// pre-signed deployment, sealing a block after each; it checks the code
// is then at Multicall3Address.
func DeployMulticall3(ctx context.Context, node *gethdev.Node) error {
	raw, err := hexutil.Decode(strings.TrimSpace(multicall3TxHex))
	if err != nil {
		return fmt.Errorf("multicall3 tx: %w", err)
	}
	deploy := new(types.Transaction)
	if err := deploy.UnmarshalBinary(raw); err != nil {
		return fmt.Errorf("multicall3 tx: %w", err)
	}
	w, err := NewWallet(ctx, node.Client())
	if err != nil {
		return err
	}
	fund := new(big.Int).Mul(new(big.Int).SetUint64(deploy.Gas()), deploy.GasPrice())
	fund.Add(fund, big.NewInt(params.GWei))
	if _, err := w.Transfer(ctx, AccountFromKey("dev", node.DevKey), multicall3Deployer, fund, types.DynamicFeeTxType); err != nil {
		return err
	}
	if _, err := node.Commit(); err != nil {
		return err
	}
	// The node's own pool takes the unprotected tx (its RPC would not).
	if err := node.SendTx(deploy); err != nil {
		return fmt.Errorf("multicall3 deployment: %w", err)
	}
	if _, err := node.Commit(); err != nil {
		return err
	}
	code, err := node.Client().CodeAt(ctx, Multicall3Address, nil)
	if err != nil {
		return err
	}
	if len(code) == 0 {
		return fmt.Errorf("multicall3: no code at %s after its deployment", Multicall3Address.Hex())
	}
	return nil
}
