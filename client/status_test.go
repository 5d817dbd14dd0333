package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestStatusOfARunThatEndedWithoutResult: Status on a run that was terminated or refused its input says so,
// with the closed-set code of why, and still returns the last status.
func TestStatusOfARunThatEndedWithoutResult(t *testing.T) {
	c, _ := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()

	// Terminated while it waits for the user.
	h, err := c.StartDraftOrder(ctx, order(key("status-term"), tshirt))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := c.Temporal().TerminateWorkflow(ctx, h.WorkflowID, "", "operator test"); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx, h.WorkflowID)
	te := wantCode(t, "terminated", err, toolkit.UpstreamError)
	if !errors.Is(err, client.ErrRunEnded) || st.State != draftorder.StateNeedsConfirm || !strings.Contains(te.Message, "terminated") {
		t.Fatalf("terminated: status %+v, error %v", st, err)
	}

	// Refused at its start: an input the client would refuse, started
	// past it, ends the run canceled with the check's INVALID_ARGUMENT.
	bad := order(key("status-fail"), tshirt)
	bad.Items = nil
	opts, err := draftorder.StartOptions(c.TaskQueue(), bad)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Temporal().ExecuteWorkflow(ctx, opts, draftorder.WorkflowName, bad)
	if err != nil {
		t.Fatal(err)
	}
	_ = run.Get(ctx, nil)
	_, err = c.Status(ctx, run.GetID())
	te = wantCode(t, "refused at its start", err, toolkit.InvalidArgument)
	if !errors.Is(err, client.ErrRunEnded) || !strings.Contains(te.Message, "items") || te.Details["run_status"] != "Canceled" {
		t.Fatalf("refused at its start: %v (details %v)", err, te.Details)
	}
	t.Logf("refused run: %v", err)
}
