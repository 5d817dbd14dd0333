package activities

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestApplicationErrorKeepsTheClosedSet: every code crosses the boundary as
// its own type, retryable exactly as the fixed table says, and reads back as
// itself.
func TestApplicationErrorKeepsTheClosedSet(t *testing.T) {
	for _, code := range toolkit.Codes() {
		var ae *temporal.ApplicationError
		if !errors.As(ApplicationError(toolkit.Errorf(code, "x")), &ae) || ae.Type() != string(code) {
			t.Fatalf("%s: %v", code, ae)
		}
		if ae.NonRetryable() == code.Retryable() {
			t.Fatalf("retryability of %s is %v", code, !ae.NonRetryable())
		}
		if back := toolkit.AsError(ae); back.Code != code {
			t.Fatalf("%s read back as %s", code, back.Code)
		}
	}
	if ApplicationError(nil) != nil {
		t.Fatal("nil must stay nil")
	}
}

func TestApplicationErrorCarriesRecoveryFieldsAndRetryDelay(t *testing.T) {
	src := toolkit.FromUpstream("rate_limited", "Stripe said slow down").WithRetryAfter(1500*time.Millisecond).
		WithRecovery("wait and call again", "stripe.get_account_status")
	err := ApplicationError(src)
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != string(toolkit.RateLimited) || ae.NonRetryable() {
		t.Fatalf("application error: %v", err)
	}
	if ae.NextRetryDelay() != 2*time.Second {
		t.Fatalf("next retry delay %v, want 2s (rounded up)", ae.NextRetryDelay())
	}
	back := toolkit.AsError(err)
	if back.Details["upstream_code"] != "rate_limited" || back.RecoverySuggestion == "" || back.NextSteps[0] != "stripe.get_account_status" {
		t.Fatalf("details lost across the boundary: %+v", back)
	}
}
