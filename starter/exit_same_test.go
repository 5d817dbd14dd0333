package main

import (
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// `starter tool call` and `starter draft-order start` exit alike for the
// same refusal: a draft order a tool refused ends with that tool's code,
// and exits as the tool call's envelope with that code does
// (exitForAnswer: INVALID_ARGUMENT 2, NOT_FOUND and OUT_OF_STOCK 1); an
// end the workflow decided itself is 1.
func TestDraftOrderEndExitsLikeTheToolsRefusal(t *testing.T) {
	for _, code := range toolkit.Codes() {
		res := draftorder.Result{State: draftorder.StateRefused, Code: code, Message: "refused"}
		if got, want := exitEnded(res), exitForAnswer(code); got != want {
			t.Errorf("%s: draft-order exits %d, tool call %d", code, got, want)
		}
	}
	if got := exitEnded(draftorder.Result{State: draftorder.StateApprovalRejected}); got != exitRefused {
		t.Errorf("a rejected approval exits %d", got)
	}
	if exitEnded(draftorder.Result{State: draftorder.StateRefused, Code: toolkit.InvalidArgument}) != exitCannot {
		t.Error("an INVALID_ARGUMENT refusal is not exit 2 as a refused tool call's is")
	}
	if exitForAnswer(toolkit.NotFound) != exitRefused || exitForAnswer(toolkit.OutOfStock) != exitRefused {
		t.Error("a tool answering NOT_FOUND or OUT_OF_STOCK is not exit 1")
	}
}
