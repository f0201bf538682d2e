// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// StakingPool stands in for a liquid staking pool (Everstake's, which
// Trezor Suite shows) on the dev chain: it has the per-address read
// methods an explorer calls, with values a test sets per address. Staking
// ether through stake() counts as pending, as a deposit waiting for a
// validator does.
contract StakingPool {
    struct Account {
        uint256 pending;
        uint256 pendingDeposited;
        uint256 deposited;
        uint256 withdrawRequested;
        uint256 withdrawReady;
        uint256 restaked;
        uint256 autocompound;
    }

    address public owner;
    mapping(address => Account) private accounts;

    constructor() {
        owner = msg.sender;
    }

    // setAccount sets every value of who (the owner only).
    function setAccount(address who, uint256[7] calldata v) external {
        require(msg.sender == owner, "not the owner");
        accounts[who] = Account(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    }

    function stake() external payable {
        accounts[msg.sender].pending += msg.value;
    }

    function pendingBalanceOf(address a) external view returns (uint256) {
        return accounts[a].pending;
    }

    function pendingDepositedBalanceOf(address a) external view returns (uint256) {
        return accounts[a].pendingDeposited;
    }

    function depositedBalanceOf(address a) external view returns (uint256) {
        return accounts[a].deposited;
    }

    // withdrawRequest is the amount asked to be withdrawn and the part of
    // it ready to claim.
    function withdrawRequest(address a) external view returns (uint256 requested, uint256 readyForClaim) {
        return (accounts[a].withdrawRequested, accounts[a].withdrawReady);
    }

    function restakedRewardOf(address a) external view returns (uint256) {
        return accounts[a].restaked;
    }

    function autocompoundBalanceOf(address a) external view returns (uint256) {
        return accounts[a].autocompound;
    }
}
