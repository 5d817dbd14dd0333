package evidence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// dbError wraps a database failure for callers at the activity boundary.
// Conditions that go away on their own — the server refusing, resetting or
// timing out connections, starting up or shutting down, serialisation
// failures — become a retryable UPSTREAM_ERROR so Temporal retries the
// activity; the cause is kept for errors.Is/As. Anything else is returned
// wrapped with %w (the invoker reports it as UPSTREAM_ERROR too).
func dbError(op string, err error) error {
	if err == nil {
		return nil
	}
	if transient(err) {
		return toolkit.Errorf(toolkit.UpstreamError, "evidence store: %s: database unavailable, retry later", op).
			WithDetail("upstream_code", "db_error").WithCause(err)
	}
	return fmt.Errorf("evidence store: %s: %w", op, err)
}

// transient reports whether err is a condition worth retrying.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			strings.HasPrefix(pgErr.Code, "53"),          // insufficient resources
			strings.HasPrefix(pgErr.Code, "57P"),         // admin/crash shutdown, cannot connect now
			pgErr.Code == "40001", pgErr.Code == "40P01": // serialisation failure, deadlock
			return true
		}
		return false
	}
	if pgconn.Timeout(err) || pgconn.SafeToRetry(err) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"conn closed", "connection refused", "connection reset", "broken pipe",
		"the database system is starting up", "the database system is shutting down", "closed pool"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
