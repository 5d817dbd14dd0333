package stripetools

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v76"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// DefaultRetryAfter is used when a 429 carries no usable Retry-After.
const DefaultRetryAfter = time.Second

// maxRetryAfter caps a Retry-After we honour: a longer wait belongs to the
// workflow's own timers, not to an activity retry delay.
const maxRetryAfter = 60 * time.Second

// operation says which tool failed, because the same Stripe answer has a
// different upstream name per tool (docs/errors.md#upstream-codes: a missing
// account is not_found for the status read and invalid_account for the link
// tools).
type operation int

const (
	opStatus operation = iota
	opLink
	// opPayment: a PaymentIntent call (payments.go).
	opPayment
)

// mapError turns a stripe-go or transport error into the closed code set,
// keeping the lower-case upstream name in details.upstream_code
// (docs/errors.md#upstream-codes). Stripe's own message is not copied: it can
// quote part of the API key.
func mapError(ctx context.Context, op operation, err error) *toolkit.Error {
	fallback := "try again shortly"
	next := []string{}
	if op == opLink {
		fallback = "try again shortly, or send the merchant to the Express Dashboard"
		next = []string{"stripe.create_login_link"}
	}
	if ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
		// A timeout is reported with a suggested retry time
		// (docs/tools.md#onboarding-tools).
		return toolkit.FromUpstream("timeout", "Stripe did not answer within the time limit").WithCause(err).
			WithDetail("suggested_retry_after_ms", 1000).WithRecovery(fallback, next...)
	}
	var se *stripe.Error
	if !errors.As(err, &se) {
		return toolkit.FromUpstream("upstream_error", "Stripe could not be reached").WithCause(err).
			WithRecovery(fallback, next...)
	}
	var te *toolkit.Error
	status := se.HTTPStatusCode
	switch {
	case status == http.StatusTooManyRequests:
		wait := retryAfter(se)
		te = toolkit.FromUpstream("rate_limited", "Stripe is rate limiting requests").
			WithRetryAfter(wait).WithDetail("retry_after_ms", wait.Milliseconds()).
			WithRecovery("wait for retry_after_seconds, then try once more")
	case status == http.StatusUnauthorized:
		te = toolkit.FromUpstream("unauthorized", "Stripe refused the API key").
			WithRecovery("the platform's Stripe key is wrong or revoked; report it, do not retry")
	case status == http.StatusForbidden:
		te = toolkit.FromUpstream("forbidden", "the API key may not perform this request").
			WithRecovery("the restricted key lacks a permission; report it, do not retry")
	case se.Type == stripe.ErrorTypeIdempotency:
		te = toolkit.FromUpstream("idempotency_error", "Stripe saw this idempotency key with different parameters")
	case status == http.StatusNotFound || se.Code == stripe.ErrorCodeResourceMissing || se.Code == stripe.ErrorCodeAccountInvalid:
		name := "not_found"
		if op == opLink {
			name = "invalid_account"
		}
		te = toolkit.FromUpstream(name, "Stripe does not know this connected account").
			WithRecovery("check the merchant's stripe_account_id with merchant.get_row", "merchant.get_row")
	case status == http.StatusBadRequest && op == opLink && se.Param == "account":
		// E.g. a login link for an account that is not Express.
		te = toolkit.FromUpstream("invalid_account", "Stripe refused a link for this account").
			WithRecovery("this account cannot use this kind of link; use the other link tool", next...)
	case status == http.StatusBadRequest:
		te = toolkit.FromUpstream("invalid_request", "Stripe refused the request parameters")
	case status == http.StatusConflict:
		te = toolkit.FromUpstream("conflict", "Stripe reported a conflicting concurrent request").WithRecovery(fallback, next...)
	default:
		te = toolkit.FromUpstream("upstream_error", "Stripe failed (HTTP %d)", status).WithRecovery(fallback, next...)
	}
	te = te.WithCause(err).WithDetail("http_status", status)
	if se.Code != "" {
		te = te.WithDetail("stripe_code", string(se.Code))
	}
	if se.RequestID != "" {
		te = te.WithDetail("stripe_request_id", se.RequestID)
	}
	return te
}

// retryAfter reads Retry-After (delta seconds or an HTTP date) from the
// response that carried the error.
func retryAfter(se *stripe.Error) time.Duration {
	if se.LastResponse == nil {
		return DefaultRetryAfter
	}
	return parseRetryAfter(se.LastResponse.Header.Get("Retry-After"), time.Now())
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return DefaultRetryAfter
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	} else {
		return DefaultRetryAfter
	}
	if d <= 0 {
		return DefaultRetryAfter
	}
	if d > maxRetryAfter {
		return maxRetryAfter
	}
	return d
}
