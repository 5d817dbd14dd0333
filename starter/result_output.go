package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// confirmOutput is confirm's --json output: the result, as before, and who
// created the draft order. A confirmation is idempotent (the same
// quote_hash again is the same draft order), so a caller that retried
// needs to know whether its call made the draft or found it made
// (docs/backend.md#from-a-shell).
type confirmOutput struct {
	draftorder.Result
	// CreatedByThisCall: this confirmation was the one taken; the draft
	// order was created for it.
	CreatedByThisCall bool `json:"created_by_this_call"`
	// AlreadyDone: the quote_hash had been confirmed before (a retry,
	// another caller, a signal); the same draft order, no second write.
	AlreadyDone bool `json:"already_done"`
}

// emitConfirmed prints the answer of a confirmation the workflow took.
func (a *app) emitConfirmed(id string, ans draftorder.ConfirmAnswer) {
	out := confirmOutput{Result: ans.Result, CreatedByThisCall: !ans.AlreadyDone, AlreadyDone: ans.AlreadyDone}
	a.emit(out, func(w io.Writer) {
		if ans.AlreadyDone {
			fmt.Fprintln(w, "already confirmed: the draft order was created by an earlier confirmation of this quote_hash")
		} else {
			fmt.Fprintln(w, "confirmed: the draft order was created by this call")
		}
		printResult(w, id, ans.Result)
	})
}

// printRefusal prints what a draft order's error object adds to its
// message: the details (which SKU, field or rule), what to do, the tools
// worth calling next, whether trying again can help.
func printRefusal(w io.Writer, e *toolkit.Error) {
	if e == nil {
		return
	}
	details := map[string]any{}
	for k, v := range e.Details {
		if k != "state" { // the state is printed already
			details[k] = v
		}
	}
	if len(details) > 0 {
		if b, err := json.Marshal(details); err == nil {
			fmt.Fprintf(w, "  details      %s\n", b)
		}
	}
	if e.RecoverySuggestion != "" {
		fmt.Fprintf(w, "  what to do   %s\n", e.RecoverySuggestion)
	}
	if len(e.NextSteps) > 0 {
		fmt.Fprintf(w, "  next steps   %s\n", strings.Join(e.NextSteps, ", "))
	}
	fmt.Fprintf(w, "  can retry    %v\n", e.CanRetry)
}
