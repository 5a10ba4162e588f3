package cli

import (
	"errors"
	"fmt"
)

// Exit codes (DESIGN.md §6).
const (
	ExitOK       = 0
	ExitFailed   = 1 // verification failed / not every call snapshotted
	ExitUsage    = 2 // usage or configuration error, caught before work starts
	ExitInternal = 3 // a bug
)

// ExitError carries an exit code and an optional hint.
type ExitError struct {
	Code int
	Err  error
	Hint string
	// Silent: the message was already reported (e.g. in a verification report).
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageErr marks an error as a usage/configuration error (exit 2).
func usageErr(hint string, format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...), Hint: hint}
}

// withCode wraps err with an exit code and hint.
func withCode(code int, err error, hint string) error {
	return &ExitError{Code: code, Err: err, Hint: hint}
}

// silentFail is returned when a report has already explained the failure.
func silentFail(code int) error { return &ExitError{Code: code, Silent: true} }

// Hinter is implemented by errors that know what the user should do next.
type Hinter interface{ Hint() string }

func hintOf(err error) string {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Hint != "" {
		return ee.Hint
	}
	var h Hinter
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
