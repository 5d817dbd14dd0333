package registry

import (
	"slices"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// TestStepOwnersAreRegisteredFlows: every owner StepOwners names is a
// workflow type the worker registers (a renamed flow would otherwise lose
// its own steps), every internal tool has an owner, and the generic tool
// call owns no step (docs/quote-seals.md#who-may-call-a-step).
func TestStepOwnersAreRegisteredFlows(t *testing.T) {
	specs := flowtest.TestSpecs()
	flows := Registry(specs)
	owners := StepOwners()
	for tool, types := range owners {
		if len(types) == 0 {
			t.Errorf("%s has an empty owner list", tool)
		}
		for _, wt := range types {
			if _, ok := flows[wt]; !ok {
				t.Errorf("%s is owned by %q, which Registry does not register", tool, wt)
			}
			if strings.HasPrefix(wt, "ToolCall") || wt == toolcall.WorkflowName {
				t.Errorf("%s is owned by the generic tool call %s", tool, wt)
			}
		}
	}
	internal := 0
	for _, s := range specs {
		if s.Internal {
			internal++
			if owners[s.Name] == nil {
				t.Errorf("internal tool %s has no owner in StepOwners", s.Name)
			}
		}
	}
	if internal == 0 {
		t.Fatal("the test specs hold no internal tool")
	}
	c := Callers(specs)
	for _, s := range specs {
		if c.Refusal("NotOurs", s) == nil {
			t.Errorf("%s: an unregistered workflow type may call it", s.Name)
		}
		for wt := range flows {
			err := c.Refusal(wt, s)
			mayCall := owners[s.Name] == nil || slices.Contains(owners[s.Name], wt)
			if mayCall != (err == nil) {
				t.Errorf("%s from %s: refusal %v, want allowed=%v", s.Name, wt, err, mayCall)
			}
			if err != nil && (err.Code != toolkit.Forbidden || err.Details["reason"] != "internal_tool") {
				t.Errorf("%s from %s: %+v", s.Name, wt, err)
			}
		}
	}
}

// TestSettleAndRefundStepsNeverRetryBusinessCodes: the steps of a
// written draft's hold and of the refund runs retry until done, so a business code — CONFLICT
// included, which the code table retries — must be final for each of
// them, or a hold that ended the other way is asked forever
// (docs/errors.md#retryable-codes).
func TestSettleAndRefundStepsNeverRetryBusinessCodes(t *testing.T) {
	specs := map[string]toolkit.Spec{}
	for _, s := range flowtest.TestSpecs() {
		specs[s.Name] = s
	}
	outages := []toolkit.Code{toolkit.UpstreamError, toolkit.Timeout, toolkit.RateLimited}
	checked := 0
	for tool, types := range StepOwners() {
		hold := tool == commerce.ToolSettleStock || tool == commerce.ToolCreatePayment || tool == commerce.ToolCancelPayment
		if !hold && !slices.Contains(types, draftorder.RefundWorkflowName) {
			continue
		}
		s, ok := specs[tool]
		if !ok {
			t.Fatalf("%s has no spec", tool)
		}
		checked++
		for _, c := range toolkit.Codes() {
			if got, want := s.Retry.Retries(c), slices.Contains(outages, c); got != want {
				t.Errorf("%s retries %s: %v, want %v", tool, c, got, want)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d settle and refund steps checked", checked)
	}
}
