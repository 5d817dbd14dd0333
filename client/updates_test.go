package client_test

import (
	"context"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// startForTotal starts in and requires the total to come back with the
// start (Update-with-Start: no second call to learn it).
func startForTotal(t *testing.T, ctx context.Context, c *client.Client, in draftorder.Input) client.DraftOrderHandle {
	t.Helper()
	h, err := c.StartDraftOrder(ctx, in)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if h.Status.State != draftorder.StateNeedsConfirm || h.Status.Confirmation == nil || h.Status.Confirmation.QuoteHash == "" {
		t.Fatalf("start came back without the total to confirm: %+v", h.Status)
	}
	return h
}

// draftRows counts the draft_orders rows of the user's key.
func draftRows(t *testing.T, s *wiringtest.Stack, key string) int {
	t.Helper()
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM draft_orders WHERE idempotency_key = $1`, key).Scan(&n); err != nil {
		t.Fatalf("count draft_orders: %v", err)
	}
	return n
}

// concurrently runs f 20 times at once and returns each call's error.
func concurrently(f func() error) []error {
	errs := make([]error, 20)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f()
		}()
	}
	wg.Wait()
	return errs
}

// TestConcurrentConfirms: 20 callers confirm a wrong hash at once, and each
// gets its own CONFLICT with the reason; then 20 callers confirm the right
// hash at once: one draft order, and every caller gets nil — each answer
// is the workflow's to that caller, not inferred from a shared log.
func TestConcurrentConfirms(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	in := order(key("client-conc"), tshirt)
	h := startForTotal(t, ctx, c, in)
	hash := h.Status.Confirmation.QuoteHash

	wrong := "sha256:" + hex.EncodeToString(make([]byte, 32))
	for i, err := range concurrently(func() error { return c.Confirm(ctx, h.WorkflowID, wrong) }) {
		te := wantCode(t, "wrong hash", err, toolkit.Conflict)
		if te.Details["reason"] != workflows.RejectStaleQuoteHash {
			t.Fatalf("wrong hash, caller %d: details %v", i, te.Details)
		}
	}

	var mu sync.Mutex
	firsts := 0
	for i, err := range concurrently(func() error {
		ans, err := c.ConfirmResult(ctx, h.WorkflowID, hash)
		if err == nil && ans.Result.DraftOrder == nil {
			return errors.New("answered without a draft order")
		}
		if err == nil && ans.Result.DraftOrder.QuoteHash != hash {
			return errors.New("draft order for hash " + ans.Result.DraftOrder.QuoteHash)
		}
		if err == nil && !ans.AlreadyDone {
			mu.Lock()
			firsts++
			mu.Unlock()
		}
		return err
	}) {
		if err != nil {
			t.Errorf("right hash, caller %d: %v", i, err)
		}
	}
	if firsts != 1 {
		t.Errorf("%d callers were told their confirmation created the draft order, want 1", firsts)
	}
	if n := draftRows(t, s, in.Request.IdempotencyKey); n != 1 {
		t.Fatalf("%d draft_orders rows, want 1", n)
	}
	res, err := c.WaitResult(ctx, h.WorkflowID, time.Time{})
	if err != nil || res.State != draftorder.StateDraftCreated || res.DraftOrder.QuoteHash != hash {
		t.Fatalf("result after the confirmations: %+v, %v", res, err)
	}
}

// TestSignalsStillWork: the confirm signal the Web UI and the temporal CLI
// send does what it did: a stale hash is refused into the status query's
// rejected_signals, the right one creates the draft order. A confirm
// update of that hash afterwards is "already done".
func TestSignalsStillWork(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	in := order(key("client-sig"), tshirt)
	h := startForTotal(t, ctx, c, in)
	hash := h.Status.Confirmation.QuoteHash
	tc := c.Temporal()
	if err := tc.SignalWorkflow(ctx, h.WorkflowID, "", draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: "sha256:stale"}); err != nil {
		t.Fatal(err)
	}
	if err := tc.SignalWorkflow(ctx, h.WorkflowID, "", draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: hash}); err != nil {
		t.Fatal(err)
	}
	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || res.State != draftorder.StateDraftCreated || res.DraftOrder == nil || res.DraftOrder.QuoteHash != hash {
		t.Fatalf("result after the confirm signal: %+v, %v", res, err)
	}
	st, err := c.Status(ctx, h.WorkflowID)
	if err != nil || st.Rejected.Total != 1 || st.Rejected.Rejected[0].Signal != draftorder.SignalConfirm ||
		st.Rejected.Rejected[0].Reason != workflows.RejectStaleQuoteHash {
		t.Fatalf("rejected signals: %+v, %v", st.Rejected, err)
	}
	ans, err := c.ConfirmResult(ctx, h.WorkflowID, hash)
	if err != nil || !ans.AlreadyDone || ans.Result.DraftOrder.DraftOrderID != res.DraftOrder.DraftOrderID {
		t.Fatalf("confirm update after the signal: %+v, %v", ans, err)
	}
	if n := draftRows(t, s, in.Request.IdempotencyKey); n != 1 {
		t.Fatalf("%d draft_orders rows, want 1", n)
	}
}

// TestUpdateWithStart: concurrent starts of one order reach one run (one
// of them started it) and all get the same total; an input the check
// refuses starts nothing.
func TestUpdateWithStart(t *testing.T) {
	c, _ := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	in := order(key("client-uws"), tshirt)
	var mu sync.Mutex
	var handles []client.DraftOrderHandle
	for i, err := range concurrently(func() error {
		h, err := c.StartDraftOrder(ctx, in)
		mu.Lock()
		handles = append(handles, h)
		mu.Unlock()
		return err
	}) {
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	started := 0
	for _, h := range handles {
		if !h.Attached {
			started++
		}
		if h.RunID != handles[0].RunID || h.Status.Confirmation == nil ||
			h.Status.Confirmation.QuoteHash != handles[0].Status.Confirmation.QuoteHash {
			t.Fatalf("starts disagree: %+v vs %+v", h, handles[0])
		}
	}
	if started != 1 {
		t.Fatalf("%d of 20 starts say they started the run, want 1", started)
	}
	if err := c.Cancel(ctx, handles[0].WorkflowID, "test done"); err != nil {
		t.Fatal(err)
	}

	bad := order(key("client-uws-bad"), tshirt)
	bad.ShipTo.Country = "ZZ"
	_, err := c.StartDraftOrder(ctx, bad)
	wantCode(t, "refused input", err, toolkit.InvalidArgument)
	id, _ := workflows.DraftOrderID(bad.Request.UserID, bad.Request.IdempotencyKey)
	var notFound *serviceerror.NotFound
	if _, err := c.Temporal().DescribeWorkflowExecution(ctx, id, ""); !errors.As(err, &notFound) {
		t.Fatalf("a refused input started %s: %v", id, err)
	}
}
