// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Splitter forwards msg.value in equal parts to several addresses through
// internal calls, so the value moves in call frames that only a trace shows.
// The last recipient also gets the remainder of the division.
contract Splitter {
    function split(address payable[] calldata to) external payable {
        require(to.length > 0, "no recipients");
        uint256 part = msg.value / to.length;
        for (uint256 i = 0; i < to.length; i++) {
            uint256 v = i == to.length - 1 ? msg.value - part * (to.length - 1) : part;
            (bool ok,) = to[i].call{value: v}("");
            require(ok, "send failed");
        }
    }
}
