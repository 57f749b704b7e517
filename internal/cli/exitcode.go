package cli

import (
	"context"
	"errors"
	"strings"
)

// Exit codes, as scripts read them.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the command failed
	ExitUsage       = 2   // bad usage: an unknown command, flag or value
	ExitNothing     = 3   // the run finished but found nothing to cite
	ExitInterrupted = 130 // stopped by Ctrl-C (SIGINT), as shells report it
)

// codeError carries the exit code an error should end the process with.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// usageError marks err as bad usage (exit 2).
func usageError(err error) error { return &codeError{code: ExitUsage, err: err} }

// nothingError marks err as a run that finished with nothing to cite (exit 3).
func nothingError(err error) error { return &codeError{code: ExitNothing, err: err} }

// exitCode is the code the process ends with for err; ctx is the command's context, done when the user
// interrupted it.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ctx.Err())) {
		return ExitInterrupted
	}
	// Flags and argument counts are refused with typed errors (suggestFlag, typedArgErrors); an unknown command is
	// refused by cobra's command lookup before any of this program's code runs, and is known by its message only.
	if strings.HasPrefix(err.Error(), "unknown command") {
		return ExitUsage
	}
	return ExitFailure
}
