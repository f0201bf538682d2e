package app

import (
	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// ensContracts are the ENS contracts a config names (ens_registry and
// ens_base_registrar, checked when the config was parsed); nil leaves the
// API to Blockbook's mainnet defaults.
func ensContracts(cfg *bchain.Config) *api.ENSContracts {
	if cfg == nil || cfg.ENSRegistry == "" {
		return nil
	}
	return &api.ENSContracts{Registry: common.HexToAddress(cfg.ENSRegistry), BaseRegistrar: common.HexToAddress(cfg.ENSBaseRegistrar)}
}
