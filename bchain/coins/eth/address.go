package eth

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/bchain"
)

// AddressParser converts between hex addresses and 20-byte descriptors.
type AddressParser struct{}

var _ bchain.AddressParser = AddressParser{}

// AddrDescFromAddress accepts 40 hex digits, 0x-prefixed or not (as
// Blockbook does), in all-lower or all-upper case or with a valid EIP-55
// checksum; a mixed-case address with a wrong checksum is refused because it
// is most likely mistyped.
func (AddressParser) AddrDescFromAddress(addr string) (bchain.AddrDesc, error) {
	s := addr
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if len(s) != 2*common.AddressLength {
		return nil, fmt.Errorf("%w: %q: want 40 hex digits after 0x, got %d characters", bchain.ErrInvalidAddress, addr, len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: not hexadecimal", bchain.ErrInvalidAddress, addr)
	}
	if s != strings.ToLower(s) && s != strings.ToUpper(s) {
		if want := common.BytesToAddress(b).Hex(); want[2:] != s {
			return nil, fmt.Errorf("%w: %q: bad EIP-55 checksum (expected %s)", bchain.ErrInvalidAddress, addr, want)
		}
	}
	return bchain.AddrDesc(b), nil
}

// AddressesFromAddrDesc renders the EIP-55 checksummed address.
func (AddressParser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	if len(desc) != common.AddressLength {
		return nil, false, fmt.Errorf("%w: address descriptor of %d bytes, want 20", bchain.ErrInvalidAddress, len(desc))
	}
	return []string{common.BytesToAddress(desc).Hex()}, true, nil
}

// descAddress converts a descriptor to go-ethereum's address type.
func descAddress(desc bchain.AddrDesc) (common.Address, error) {
	if len(desc) != common.AddressLength {
		return common.Address{}, fmt.Errorf("%w: address descriptor of %d bytes, want 20", bchain.ErrInvalidAddress, len(desc))
	}
	return common.BytesToAddress(desc), nil
}
