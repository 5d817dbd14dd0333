package activities

import (
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// The one conversion at the Temporal boundary: a tool's *toolkit.Error
// becomes an ApplicationError here (toolkit.AsError reads it back on the
// other side), so nothing below the activities needs the SDK.

// ApplicationError converts err into the Temporal error an activity returns:
// the type is the code, retryability follows the fixed table, a RATE_LIMITED
// error's retry_after becomes the next retry delay, and the recovery fields
// travel as details so the workflow and the auditor see them.
func ApplicationError(err error) error {
	if err == nil {
		return nil
	}
	te := toolkit.AsError(err)
	opts := temporal.ApplicationErrorOptions{
		NonRetryable: !te.Code.Retryable(),
		// The cause may carry secrets from an SDK (URLs, keys): it stays
		// out of the payload that lands in history.
		Details: []any{*te},
	}
	if te.RetryAfterSeconds > 0 {
		opts.NextRetryDelay = time.Duration(te.RetryAfterSeconds) * time.Second
	}
	return temporal.NewApplicationErrorWithOptions(te.Message, string(te.Code), opts)
}
