package draftorder

import (
	"reflect"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// An unknown SKU is an outcome: the run completes NOT_FOUND, and the result
// and the status query carry the tool's whole error object — details
// naming the SKU, recovery_suggestion, next_steps, can_retry.
func TestUnknownSKUCompletesNotFoundWithTheWholeError(t *testing.T) {
	f := newFixture(t)
	f.Failures["GetQuote"] = toolkit.Errorf(toolkit.NotFound, "unknown or discontinued sku: [SKU-NOPE]").
		WithDetail("skus", []string{"SKU-NOPE"}).
		WithRecovery("remove the unknown items or search the catalog for a replacement", "pricing.get_realtime_quote")
	res := f.run()
	ended := f.status()
	for _, r := range []*Result{&res, ended.Result} {
		if r == nil || r.State != StateNotFound || r.Code != toolkit.NotFound || r.Error == nil {
			t.Fatalf("result = %+v", r)
		}
		e := r.Error
		if !reflect.DeepEqual(e.Details["skus"], []any{"SKU-NOPE"}) && !reflect.DeepEqual(e.Details["skus"], []string{"SKU-NOPE"}) {
			t.Errorf("details = %v, want skus [SKU-NOPE]", e.Details)
		}
		if e.RecoverySuggestion == "" || len(e.NextSteps) != 1 || e.NextSteps[0] != "pricing.get_realtime_quote" || e.CanRetry {
			t.Errorf("error = %+v, want the tool's recovery, next_steps and can_retry false", e)
		}
	}
	if f.Count("ComputeTotal") != 0 || f.Count("CreateDraftOrder") != 0 {
		t.Fatalf("the order went on after NOT_FOUND")
	}
}

// Every code no retry of the order changes ends the order with a result,
// never a failed run: the codes with a state of their own, and the rest
// as REFUSED with the code.
func TestEveryBusinessCodeCompletesTheRun(t *testing.T) {
	cases := []struct {
		activity string
		code     toolkit.Code
		state    string
	}{
		{"GetQuote", toolkit.NotFound, StateNotFound},
		{"GetQuote", toolkit.OutOfStock, StateOutOfStock},
		{"GetQuote", toolkit.InvalidArgument, StateRefused},
		{"GetQuote", toolkit.Forbidden, StateRefused},
		{"GetQuote", toolkit.Unauthorized, StateRefused},
		{"ChooseOrigins", toolkit.InvalidArgument, StateRefused},
		{"ChooseOrigins", toolkit.AddressInvalid, StateAddressInvalid},
		{"ChooseOrigins", toolkit.NotFound, StateNotFound},
		{"CheckCompliance", toolkit.ComplianceBlocked, StateComplianceBlocked},
		{"ComputeTotal", toolkit.PriceChanged, StateRefused},
		{"CreateDraftOrder", toolkit.Conflict, StateRefused},
		{"CreateDraftOrder", toolkit.NeedsUserConfirmation, StateRefused},
		{"CreateDraftOrder", toolkit.OutOfStock, StateOutOfStock},
	}
	for _, c := range cases {
		t.Run(c.activity+"/"+string(c.code), func(t *testing.T) {
			f := newFixture(t)
			f.Fail(c.activity, toolkit.Errorf(c.code, "refused by the test").WithDetail("rule", "TEST_RULE").
				WithRecovery("do what the test says"), 0)
			f.At(time.Minute, func() {
				if f.status().Confirmation != nil {
					f.confirmPublished()
				}
			})
			res := f.run() // fails the test if the run failed
			if res.State != c.state || res.Code != c.code || res.Error == nil || res.Error.Code != c.code ||
				res.Error.Details["rule"] != "TEST_RULE" || res.Error.RecoverySuggestion != "do what the test says" {
				t.Fatalf("result = %+v (error %+v)", res, res.Error)
			}
		})
	}
}

// The outcomes the workflow decides itself carry an error object too: what
// state, why, and what to do.
func TestWorkflowOutcomesCarryRecovery(t *testing.T) {
	t.Run("expired", func(t *testing.T) {
		f := newFixture(t)
		res := f.run() // nobody confirms
		checkOutcomeError(t, res, StateExpired, toolkit.NeedsUserConfirmation)
	})
	t.Run("unavailable", func(t *testing.T) {
		f := newFixture(t)
		f.Failures["GetQuote"] = toolkit.Errorf(toolkit.UpstreamError, "database down")
		res := f.run()
		checkOutcomeError(t, res, StateUnavailable, toolkit.UpstreamError)
		// The code that outlived the window (the test environment's skipped
		// clock may time a local attempt out first: TIMEOUT, see
		// TestOutageLongerThanTheWindowIsAResult).
		cause, _ := res.Error.Details["cause"].(map[string]any)
		if c := toolkit.Code(toString(cause["code"])); c != toolkit.UpstreamError && c != toolkit.Timeout {
			t.Fatalf("details.cause = %v", res.Error.Details["cause"])
		}
		if !res.Error.CanRetry {
			t.Fatalf("UNAVAILABLE is retryable (with a new key): %+v", res.Error)
		}
	})
	t.Run("cancelled has no error", func(t *testing.T) {
		f := newFixture(t)
		f.At(time.Minute, func() { f.Env.SignalWorkflow(SignalCancel, nil) })
		if res := f.run(); res.State != StateCancelled || res.Error != nil {
			t.Fatalf("result = %+v", res)
		}
	})
}

func checkOutcomeError(t *testing.T, res Result, state string, code toolkit.Code) {
	t.Helper()
	e := res.Error
	if res.State != state || res.Code != code || e == nil || e.Code != code || e.Message != res.Message ||
		e.Details["state"] != state || e.RecoverySuggestion == "" || e.CanRetry != code.Retryable() {
		t.Fatalf("result = %+v (error %+v)", res, e)
	}
}

// toString reads a detail that is a Code in process and a string once decoded.
func toString(v any) string {
	switch x := v.(type) {
	case toolkit.Code:
		return string(x)
	case string:
		return x
	}
	return ""
}
