// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Child is created by Factory; it holds value and can selfdestruct.
contract Child {
    address public immutable owner;

    constructor(address owner_) payable {
        owner = owner_;
    }

    // destroy sends the whole balance to `to` via SELFDESTRUCT. Since Cancun
    // (EIP-6780) the code stays unless created in the same tx, but the value
    // still moves.
    function destroy(address payable to) external {
        require(msg.sender == owner, "owner");
        selfdestruct(to);
    }

    receive() external payable {}
}

// Factory creates Child contracts with CREATE inside a call, passing on
// msg.value, so the creation and the value transfer appear only in traces.
contract Factory {
    event Created(address child);

    function create() external payable returns (address) {
        Child c = new Child{value: msg.value}(msg.sender);
        emit Created(address(c));
        return address(c);
    }
}
