package draftorder

import (
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// A draft order that cannot go on as asked ends with a result, never a
// failed run: a business answer is an outcome to show the user, with the
// whole error object that says why and what to do, and the evidence of the
// answer (docs/errors.md#draft-order-outcomes). A failed run is left for
// what is no outcome at all: an input the start check refuses (which no
// client starts) and a cancelled run.

// Final states of refusals that have no state of their own before.
const (
	// StateNotFound: a tool answered NOT_FOUND (an unknown or discontinued
	// SKU); the error's details name the SKUs.
	StateNotFound = "NOT_FOUND"
	// StateRefused: a tool refused the order with any other code no retry
	// of the order changes (INVALID_ARGUMENT for a parcel no service
	// carries, FORBIDDEN, CONFLICT for a key already spent on another
	// draft, NEEDS_USER_CONFIRMATION when the total expired twice …); Code
	// says which.
	StateRefused = "REFUSED"
)

// refusalStates are the codes that end the order in a state of their own;
// every other refusal ends it REFUSED.
var refusalStates = map[toolkit.Code]string{
	toolkit.OutOfStock:        StateOutOfStock,
	toolkit.AddressInvalid:    StateAddressInvalid,
	toolkit.ComplianceBlocked: StateComplianceBlocked,
	toolkit.NotFound:          StateNotFound,
}

// refused is the final result of a tool's refusal, or nil when err is no
// refusal: nil, a cancellation, or an outage (draftorder_outlive.go
// decides those).
// The result's error is the tool's error object as the tool answered it
// (details, recovery_suggestion, next_steps, can_retry), the same object
// the refusal's evidence snapshot holds.
func (d *draftOrder) refused(err error) *Result {
	if err == nil || temporal.IsCanceledError(err) || flow.Infrastructure(err) {
		return nil
	}
	te := toolkit.AsError(err)
	state, ok := refusalStates[te.Code]
	if !ok {
		state = StateRefused
	}
	return &Result{State: state, Code: te.Code, Message: te.Message, Error: te}
}

// recovery is what a caller can do about an outcome the workflow decided
// itself.
type recovery struct {
	suggestion string
	next       []string
}

// outcomeRecovery holds one recovery per outcome the workflow decides (not
// a tool): a key keeps its completed run, so "again" always means a new
// idempotency key (docs/envelope.md#idempotency).
var outcomeRecovery = map[string]recovery{
	StateComplianceBlocked: {"tell the user which items cannot ship there (details.reasons) and offer to remove them; " +
		"the changed basket is a new draft order with a new idempotency key", []string{commerce.ToolCheckCompliance}},
	StateApprovalRejected: {"tell the user support staff did not clear this basket for this destination; " +
		"a changed basket is a new draft order with a new idempotency key", nil},
	StateApprovalExpired: {"support staff did not decide within the approval window; " +
		"start the order again with a new idempotency key", nil},
	StateExpired: {"the user did not confirm the total in time; start a new draft order with a new " +
		"idempotency key and show the user its total", nil},
	StateUnavailable: {"a dependency stayed down for the whole window; try again later with a new idempotency " +
		"key (this key keeps this result)", nil},
	StateRefused: {"fix what details names and start a new draft order with a new idempotency key", nil},
}

// outcomeError is the error object of a final state the workflow decided
// itself (nil for a state without a code: created, validated, cancelled).
// details.state names the state; callers add what they know.
func outcomeError(state string, code toolkit.Code, msg string) *toolkit.Error {
	if code == "" {
		return nil
	}
	e := toolkit.Errorf(code, "%s", msg).WithDetail("state", state)
	if r, ok := outcomeRecovery[state]; ok {
		e.WithRecovery(r.suggestion, r.next...)
	}
	return e
}

// withDetail adds one diagnostic to a result's error object.
func (r *Result) withDetail(key string, value any) *Result {
	if r.Error != nil {
		r.Error.WithDetail(key, value)
	}
	return r
}
