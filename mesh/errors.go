package mesh

import (
	"errors"
	"fmt"
)

// The errors this front answers. Their codes and messages are stable: the
// specification asks for unique values of both, and /network/options lists
// them all (allErrors) so that clients can check every answer against it.
// What varies (which field, which value) goes into details.
var (
	errUnknownNetwork  = &Error{Code: 1, Message: "Unknown network"}
	errBadRequest      = &Error{Code: 2, Message: "Invalid request body"}
	errBadBlock        = &Error{Code: 3, Message: "Invalid block identifier"}
	errBlockNotFound   = &Error{Code: 4, Message: "Block not found", Retriable: true}
	errBadTx           = &Error{Code: 5, Message: "Invalid transaction identifier"}
	errTxNotFound      = &Error{Code: 6, Message: "Transaction not found", Retriable: true}
	errBadAccount      = &Error{Code: 7, Message: "Invalid account identifier"}
	errBadCurrency     = &Error{Code: 8, Message: "Unsupported currency"}
	errNotImplemented  = &Error{Code: 9, Message: "Endpoint not implemented"}
	errUnavailable     = &Error{Code: 10, Message: "Service unavailable", Retriable: true}
	errInternal        = &Error{Code: 11, Message: "Internal error", Retriable: true}
	errRequestRejected = &Error{Code: 12, Message: "Request rejected"}
	errBadIntent       = &Error{Code: 13, Message: "Invalid operations"}
	errBadPublicKey    = &Error{Code: 14, Message: "Invalid public key"}
	errBadSignature    = &Error{Code: 15, Message: "Invalid signature"}
	errBadTxBlob       = &Error{Code: 16, Message: "Invalid transaction"}
	errTxRejected      = &Error{Code: 17, Message: "Transaction rejected by the node"}
	errOffline         = &Error{Code: 18, Message: "Endpoint unavailable offline"}
	errBadCallMethod   = &Error{Code: 19, Message: "Unsupported call method"}
)

var allErrors = []*Error{errUnknownNetwork, errBadRequest, errBadBlock, errBlockNotFound, errBadTx,
	errTxNotFound, errBadAccount, errBadCurrency, errNotImplemented, errUnavailable, errInternal, errRequestRejected,
	errBadIntent, errBadPublicKey, errBadSignature, errBadTxBlob, errTxRejected, errOffline, errBadCallMethod}

// meshError is an answer of one of the errors above with its details.
type meshError struct {
	e       *Error
	details string
	cause   error // for the log only
}

func (m *meshError) Error() string {
	if m.details == "" {
		return m.e.Message
	}
	return m.e.Message + ": " + m.details
}

func (m *meshError) Unwrap() error { return m.cause }

func fail(e *Error, format string, args ...any) error {
	return &meshError{e: e, details: fmt.Sprintf(format, args...)}
}

func failWith(e *Error, cause error, format string, args ...any) error {
	return &meshError{e: e, details: fmt.Sprintf(format, args...), cause: cause}
}

// wire renders the answer: the stable object, with the variable part in
// details.
func (m *meshError) wire() *Error {
	out := *m.e
	if m.details != "" {
		out.Details = map[string]any{"reason": m.details}
	}
	return &out
}

func asMeshError(err error) (*meshError, bool) {
	var m *meshError
	ok := errors.As(err, &m)
	return m, ok
}
