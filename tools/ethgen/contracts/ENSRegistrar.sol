// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// ENSRegistrar stands in for ENS's .eth registrar controller on the dev
// chain: register emits the controller's NameRegistered event (the name,
// its label hash and owner indexed, the cost and the expiry), which is
// what an explorer reads to name addresses.
contract ENSRegistrar {
    event NameRegistered(string name, bytes32 indexed label, address indexed owner, uint256 cost, uint256 expires);

    // register registers name to owner for a year; the ether sent is the cost.
    function register(string calldata name, address owner) external payable {
        emit NameRegistered(name, keccak256(bytes(name)), owner, msg.value, block.timestamp + 365 days);
    }
}
