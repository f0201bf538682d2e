package api

import (
	"errors"
	"fmt"
)

// Error is a mistake in the request (bad parameter, unknown object) or a
// refusal by the node that the user should see. Servers answer it with HTTP
// 400 and its message; any other error is our fault and is answered 500
// without details.
type Error struct {
	Msg string
	Err error // optional cause, for logs
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// userErr formats a user-facing error.
func userErr(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// AsUserError returns the user-facing error in err's chain, if any.
func AsUserError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
