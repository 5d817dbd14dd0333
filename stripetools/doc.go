// Package stripetools implements the Stripe Connect tools
// (docs/tools.md#onboarding-tools): stripe.get_account_status,
// stripe.create_relink_url and stripe.create_login_link, on stripe-go v76.
//
// # Retries: who retries what
//
// There is exactly one retry layer, Temporal's. stripe-go's own retries are
// switched off (MaxNetworkRetries = 0), so one activity attempt makes one
// HTTP request:
//   - stripe-go would sleep at least 500 ms between its tries, outside the
//     200 ms backoff our specs ask for, and invisibly: the history would show
//     one attempt that took three requests' time.
//   - Layered retries multiply: 3 stripe-go tries × 3 Temporal attempts is 9
//     requests for one step, which is exactly how a rate limit gets worse.
//   - Temporal retries are durable and visible, follow the spec's policy
//     (200 ms, ×2, at most 3 attempts, non-retryable codes never retried),
//     and a 429's Retry-After becomes the next attempt's delay through
//     activities.ApplicationError (NextRetryDelay) instead of a worker thread
//     sleeping.
//
// POSTs stay safe under those retries because every one carries an
// idempotency key derived from the request envelope's idempotency key,
// which the workflow derives from its workflow id and the step; a retried
// attempt therefore gets Stripe's stored answer instead of a second object.
// Outside Temporal (an agent calling the invoker directly) nothing retries
// by itself; the error envelope's can_retry and retry_after_seconds tell the
// caller when to.
package stripetools
