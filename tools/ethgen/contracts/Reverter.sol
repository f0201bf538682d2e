// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Reverter moves value in call frames that are then reverted: the traces show
// those transfers (with an error), but no balance changes.
contract Reverter {
    // sendThenRevert forwards msg.value to `to` and then reverts the whole call.
    function sendThenRevert(address payable to) public payable {
        (bool ok,) = to.call{value: msg.value}("");
        require(ok, "send failed");
        revert("reverted on purpose");
    }

    // tryInner calls sendThenRevert on itself with msg.value and swallows the
    // revert: the tx succeeds, the contract keeps msg.value, and the inner
    // frames (self call and the transfer to `to`) are reverted.
    function tryInner(address payable to) external payable {
        try this.sendThenRevert{value: msg.value}(to) {
            revert("unreachable");
        } catch {}
    }

    receive() external payable {}
}
