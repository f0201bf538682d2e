package bchain

import (
	"errors"
	"fmt"
)

// Sentinel errors shared by all chain plugins. Callers test with errors.Is;
// plugins wrap them with context.
var (
	// ErrBlockNotFound: the node does not have the requested block.
	ErrBlockNotFound = errors.New("block not found")
	// ErrTxNotFound: the node does not know the transaction.
	ErrTxNotFound = errors.New("transaction not found")
	// ErrInvalidHash: a hash parameter is not 64 hex characters.
	ErrInvalidHash = errors.New("invalid hash")
	// ErrInvalidAddress: an address does not parse for this coin/network.
	ErrInvalidAddress = errors.New("invalid address")
	// ErrInvalidData: a raw block or tx does not decode.
	ErrInvalidData = errors.New("invalid data")
	// ErrNodeUnavailable: the node cannot be reached or answers garbage.
	// Transient by nature: callers retry with backoff.
	ErrNodeUnavailable = errors.New("node unavailable")
	// ErrUnsupported: the node lacks the capability (e.g. fee estimation).
	ErrUnsupported = errors.New("not supported by the node")
)

// RPCError is an error the node itself returned for a well-formed request
// (e.g. a rejected transaction). Its message is safe to show to users.
type RPCError struct {
	Code    int
	Message string
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }
