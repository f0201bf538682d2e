// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// MetaNFT is a small ERC721 whose minter sets each token's URI, for the
// explorer's NFT page tests: data: URIs (on-chain metadata), http URIs on
// any host. Only the deployer may mint; tokens do not move.
contract MetaNFT {
    string public name;
    string public symbol;
    address public immutable minter;
    uint256 public totalSupply;
    mapping(uint256 => address) public ownerOf;
    mapping(address => uint256) public balanceOf;
    mapping(uint256 => string) private uris;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
        minter = msg.sender;
    }

    function supportsInterface(bytes4 id) external pure returns (bool) {
        return id == 0x01ffc9a7 || id == 0x80ac58cd || id == 0x5b5e139f;
    }

    function tokenURI(uint256 id) external view returns (string memory) {
        require(ownerOf[id] != address(0), "no token");
        return uris[id];
    }

    function mint(address to, uint256 id, string calldata uri) external {
        require(msg.sender == minter, "minter");
        require(to != address(0) && ownerOf[id] == address(0), "mint");
        ownerOf[id] = to;
        balanceOf[to] += 1;
        totalSupply += 1;
        uris[id] = uri;
        emit Transfer(address(0), to, id);
    }
}
