// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Bytes32Token is an ERC20 whose name() and symbol() return bytes32 instead
// of string, like early tokens (MKR); indexers must decode both forms.
contract Bytes32Token {
    bytes32 public name;
    bytes32 public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(bytes32 name_, bytes32 symbol_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        require(balanceOf[msg.sender] >= value, "balance");
        balanceOf[msg.sender] -= value;
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }
}
