package datasources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/causeway/causeway/egress"
)

// describeNetError turns a failed connection into an error that says what
// happened in words an operator acts on, keeping a refusal by the allowlist
// recognizable as permanent.
func describeNetError(err error) error {
	if egress.IsBlocked(err) {
		return fmt.Errorf("%w: %w", ErrBlocked, err)
	}
	switch dialFailure(err) {
	case "refused":
		return fmt.Errorf("connection refused: %w", err)
	case "timeout":
		return fmt.Errorf("timed out: %w", err)
	case "unreachable":
		return fmt.Errorf("host unreachable: %w", err)
	case "unresolved":
		return fmt.Errorf("name not resolved: %w", err)
	}
	return err
}

// dialFailure classifies why a connection could not be opened: "refused"
// (nothing listens), "timeout", "unreachable" (no route), "unresolved" (the
// name did not resolve), "blocked" (the allowlist) or "" when it is none of
// these.
func dialFailure(err error) string {
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		return ""
	case egress.IsBlocked(err):
		return "blocked"
	case errors.As(err, &dnsErr):
		return "unresolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "unreachable"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return ""
}
