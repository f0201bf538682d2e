// SPDX-License-Identifier: MIT
// An ERC-4626 vault and its asset: OpenZeppelin's ERC20 and ERC4626
// (pinned in package.json), deployed by the ERC-4626 e2e test.
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";

// TestUSD: a 6-decimal token (as USDC), its supply minted to the deployer.
contract TestUSD is ERC20 {
    constructor(uint256 supply) ERC20("Test USD", "TUSD") {
        _mint(msg.sender, supply);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }
}

// TestVault: OpenZeppelin's ERC-4626 over an asset, with 3 decimals of
// offset, so its shares have decimals of their own (9 over TestUSD).
contract TestVault is ERC4626 {
    constructor(IERC20 asset_) ERC20("Test USD Vault", "vTUSD") ERC4626(asset_) {}

    function _decimalsOffset() internal pure override returns (uint8) {
        return 3;
    }
}
