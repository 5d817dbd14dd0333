package client_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

var (
	tshirt  = commerce.LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 2}
	perfume = commerce.LineItem{SKU: "PRF-ROSE-EDP100", Quantity: 1} // UN1266 by air: uncertain, needs staff
)

// newClient starts the stack and a client on its task queue.
func newClient(t *testing.T) (*client.Client, *wiringtest.Stack) {
	t.Helper()
	s := wiringtest.Start(t)
	s.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(20*time.Second))
	defer cancel()
	opts, err := client.OptionsFromEnv()
	if err != nil {
		t.Fatalf("client.OptionsFromEnv: %v", err)
	}
	c, err := client.New(ctx, opts)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	t.Cleanup(c.Close)
	if c.TaskQueue() != s.TaskQueue {
		t.Fatalf("task queue %s, want %s", c.TaskQueue(), s.TaskQueue)
	}
	return c, s
}

func order(key string, items ...commerce.LineItem) draftorder.Input {
	return draftorder.Input{
		Request: toolkit.Request{UserID: "u_client", IdempotencyKey: key, Currency: "EUR",
			Client: toolkit.Client{App: "backend", Version: "test"}},
		Order: commerce.Order{Items: items, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
	}
}

func key(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, what string, err error, code toolkit.Code) *toolkit.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	te, ok := err.(*toolkit.Error)
	if !ok {
		t.Fatalf("%s: error %T (%v) is not a *toolkit.Error", what, err, err)
	}
	if te.Code != code {
		t.Fatalf("%s: %s, want %s", what, te, code)
	}
	return te
}

// TestDraftOrderConfirmed walks the happy path the way a backend would:
// start, start again (attached, same run), wait for the total, a stale
// hash refused, the right one accepted, the result, then repeats that are
// harmless (confirm again, start after close) and one that is not
// (cancel after creation).
func TestDraftOrderConfirmed(t *testing.T) {
	c, _ := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	in := order(key("client"), tshirt)

	h, err := c.StartDraftOrder(ctx, in)
	if err != nil || h.Attached || h.RunID == "" {
		t.Fatalf("first start: %+v, %v", h, err)
	}
	again, err := c.StartDraftOrder(ctx, in)
	if err != nil || !again.Attached || again.RunID != h.RunID || again.WorkflowID != h.WorkflowID {
		t.Fatalf("second start: %+v (first %+v), %v", again, h, err)
	}

	st, err := c.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Confirmation == nil || st.State != draftorder.StateNeedsConfirm {
		t.Fatalf("wait for the total: %+v, %v", st, err)
	}
	te := wantCode(t, "stale hash", c.Confirm(ctx, h.WorkflowID, "sha256:"+hex.EncodeToString(make([]byte, 32))), toolkit.Conflict)
	if te.Details["reason"] != workflows.RejectStaleQuoteHash {
		t.Fatalf("stale hash: details %v", te.Details)
	}
	if err := c.Confirm(ctx, h.WorkflowID, st.Confirmation.QuoteHash); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || res.State != draftorder.StateDraftCreated || res.DraftOrder == nil {
		t.Fatalf("result: %+v, %v", res, err)
	}
	if res.Total.QuoteHash != st.Confirmation.QuoteHash || res.DraftOrder.QuoteHash != st.Confirmation.QuoteHash {
		t.Fatalf("draft order for hash %s, confirmed %s", res.DraftOrder.QuoteHash, st.Confirmation.QuoteHash)
	}

	if err := c.Confirm(ctx, h.WorkflowID, st.Confirmation.QuoteHash); err != nil {
		t.Fatalf("confirming the same hash again: %v", err)
	}
	wantCode(t, "cancel after creation", c.Cancel(ctx, h.WorkflowID, "too late"), toolkit.Conflict)
	closed, err := c.StartDraftOrder(ctx, in)
	if err != nil || !closed.Attached || closed.RunID != h.RunID {
		t.Fatalf("start after close: %+v, %v", closed, err)
	}
	res2, err := c.WaitResult(ctx, closed.WorkflowID, time.Time{})
	if err != nil || res2.DraftOrder.DraftOrderID != res.DraftOrder.DraftOrderID {
		t.Fatalf("result after the start after close: %+v, %v", res2, err)
	}
}

// TestDraftOrderApproval: support staff decide through the client, sealed
// for them; someone not on the roster, a role the review does not allow
// and a decision nobody sealed are refused with the workflow's reason; a
// cancel while waiting for the user ends the run as CANCELLED.
func TestDraftOrderApproval(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	in := order(key("client-apr"), perfume)
	in.ShipTo = commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	// Perfume flies only after review (by road within the EU it is allowed:
	// compliance follows the chosen option's mode).
	in.ShippingService = commerce.ServiceExpress
	h, err := c.StartDraftOrder(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Approvals.Pending == nil {
		t.Fatalf("wait for the approval: %+v, %v", st, err)
	}
	wantCode(t, "unknown approver", c.Approve(ctx, h.WorkflowID, client.ApprovalDecision{Sealer: s.Sealer("mallory")}), toolkit.Forbidden)
	wantCode(t, "role not allowed", c.Approve(ctx, h.WorkflowID, client.ApprovalDecision{Sealer: s.Sealer("alice.support")}), toolkit.Forbidden)
	wantCode(t, "no sealer", c.Approve(ctx, h.WorkflowID, client.ApprovalDecision{}), toolkit.Unauthorized)
	wantCode(t, "reject without reason", c.Reject(ctx, h.WorkflowID, client.ApprovalDecision{Sealer: s.Sealer("bob.compliance")}), toolkit.InvalidArgument)
	wantCode(t, "stale approval id", c.Approve(ctx, h.WorkflowID,
		client.ApprovalDecision{ApprovalID: "apr_0000000000000000", Sealer: s.Sealer("bob.compliance")}), toolkit.Conflict)
	if err := c.Approve(ctx, h.WorkflowID, client.ApprovalDecision{Sealer: s.Sealer("bob.compliance"), Reason: "DG service"}); err != nil {
		t.Fatalf("approve: %v", err)
	}
	st, err = c.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Confirmation == nil {
		t.Fatalf("after the approval: %+v, %v", st, err)
	}
	wantCode(t, "approve twice", c.Approve(ctx, h.WorkflowID, client.ApprovalDecision{Sealer: s.Sealer("carol.admin")}), toolkit.Conflict)
	if err := c.Cancel(ctx, h.WorkflowID, "changed my mind"); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if err := c.Cancel(ctx, h.WorkflowID, "again"); err != nil {
		t.Fatalf("a second cancel: %v", err)
	}
	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || res.State != draftorder.StateCancelled || res.Approval == nil || !res.Approval.Approved() {
		t.Fatalf("result: %+v, %v", res, err)
	}
}

// TestErrors pins the closed codes of what goes wrong before, or instead
// of, a workflow answering.
func TestErrors(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()

	_, err := c.Status(ctx, "draft-order/u_client/never-started-1")
	wantCode(t, "status of a missing workflow", err, toolkit.NotFound)
	wantCode(t, "confirm to a missing workflow", c.Confirm(ctx, "draft-order/u_client/never-started-1", "sha256:x"), toolkit.NotFound)
	_, err = c.Status(ctx, "onboarding/m_client")
	wantCode(t, "status of another type's id", err, toolkit.InvalidArgument)
	_, err = c.WaitResult(ctx, "draft-order/u_client/never-started-1", time.Now().Add(5*time.Second))
	wantCode(t, "result of a missing workflow", err, toolkit.NotFound)

	bad := order(key("client-bad"), tshirt)
	bad.ShipTo.Name = ""
	_, err = c.StartDraftOrder(ctx, bad)
	if te := wantCode(t, "invalid input", err, toolkit.InvalidArgument); te.Message != "ship_to.name is required" {
		t.Fatalf("invalid input: %q", te.Message)
	}
	if _, derr := s.Temporal.DescribeWorkflowExecution(ctx, "draft-order/u_client/"+bad.Request.IdempotencyKey, ""); derr == nil {
		t.Fatal("an invalid input started a run (and spent the key)")
	}
	bad = order(key("client-bad"), tshirt)
	bad.Request.Client.App = "mobile"
	_, err = c.StartDraftOrder(ctx, bad)
	wantCode(t, "invalid envelope", err, toolkit.InvalidArgument)
	bad = order("short", tshirt)
	_, err = c.StartDraftOrder(ctx, bad)
	wantCode(t, "invalid key", err, toolkit.InvalidArgument)

	// A deadline before the user confirms.
	h, err := c.StartDraftOrder(ctx, order(key("client-wait"), tshirt))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WaitResult(ctx, h.WorkflowID, time.Now().Add(300*time.Millisecond))
	wantCode(t, "deadline", err, toolkit.Timeout)
	if err := c.Cancel(ctx, h.WorkflowID, ""); err != nil {
		t.Fatal(err)
	}

	_, err = client.New(ctx, client.Options{Temporal: sdkclient.Options{HostPort: "127.0.0.1:1"}})
	te := wantCode(t, "unreachable server", err, toolkit.UpstreamError)
	if want := "cannot reach Temporal at 127.0.0.1:1"; len(te.Message) < len(want) || te.Message[:len(want)] != want {
		t.Fatalf("unreachable server: %q", te.Message)
	}
}

// TestOnboarding: start attaches to the running onboarding, the status is
// typed, signals reach it, unknown merchants are NOT_FOUND. The worker runs
// the onboarding's activities, so the merchant exists (inserted by the
// admin: the service only reads merchants) and its Stripe account (
// stripe-mock's) has requirements past due: the run waits for the merchant
// and is still open when the signals arrive, however slow the machine.
func TestOnboarding(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	suffix := hex.EncodeToString([]byte(key("x")))[:8]
	m := "m_client_" + suffix
	testenv.AdminExec(t, s.Pool, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, country, business_type, onboarding_status)
		VALUES ($1, $2, 'Client Test Shop', 'GB', 'company', 'in_progress')`, m, "acct_1CwClient"+suffix)
	h, err := c.StartOnboarding(ctx, onboardingflow.Input{MerchantID: m})
	if err != nil || h.Attached || h.WorkflowID != "onboarding/"+m {
		t.Fatalf("start: %+v, %v", h, err)
	}
	s.TerminateLater(t, h.WorkflowID)
	again, err := c.StartOnboarding(ctx, onboardingflow.Input{MerchantID: m})
	if err != nil || !again.Attached || again.RunID != h.RunID {
		t.Fatalf("second start: %+v, %v", again, err)
	}
	st, err := c.OnboardingStatus(ctx, m)
	if err != nil || st.MerchantID != m || st.State == "" {
		t.Fatalf("status: %+v, %v", st, err)
	}
	if err := c.Returned(ctx, m, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Dashboard(ctx, m); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "unknown merchant", c.Returned(ctx, "m_client_nobody", false), toolkit.NotFound)
	_, err = c.OnboardingStatus(ctx, "Jane Doe")
	wantCode(t, "bad merchant id", err, toolkit.InvalidArgument)
}
