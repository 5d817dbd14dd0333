package draftorder

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

func TestHappyPath(t *testing.T) {
	happyPath(t, newFixture(t))
}

func happyPath(t *testing.T, f *fixture) {
	var published Status
	f.At(time.Minute, func() {
		published = f.status()
		f.confirmPublished()
	})
	res := f.run()
	if res.State != StateDraftCreated || res.DraftOrder == nil || res.DraftOrder.DraftOrderID != "do_01TEST" {
		t.Fatalf("result = %+v", res)
	}
	if published.State != StateNeedsConfirm || published.Confirmation == nil || published.Destination != "DE" {
		t.Fatalf("published status = %+v", published)
	}
	// 2 × 25.00 + 8.99 standard shipping = 58.99, plus the fake 19% VAT
	// (11.20, truncated) collected at checkout (DDP).
	if got := published.Confirmation.GrandTotal; got != (commerce.Money{Amount: 7019, Currency: "EUR"}) {
		t.Fatalf("grand total = %+v", got)
	}
	created := f.Calls["CreateDraftOrder"][0].(flowtest.ToolIn[commerce.CreateDraftOrderArgs])
	if created.Args.ConfirmedQuoteHash != published.Confirmation.QuoteHash || created.Request.IdempotencyKey != "key-0001-abcd" {
		t.Fatalf("create input = %+v", created)
	}
	if len(res.Evidence) != 5 {
		t.Fatalf("evidence = %+v, want one snapshot per tool call (5, the origin choice first)", res.Evidence)
	}
	// Started without the start's attributes, the run sets them
	// (NEEDS_USER_CONFIRMATION, startState); PRICING and CREATING last
	// milliseconds inside a task: the others are the hold the written
	// draft goes on to in the same run, and its end (24 h on, unpaid).
	want := append([]string{"state=" + StateNeedsConfirm}, heldUpserts...)
	if got := f.Upserts; !reflect.DeepEqual(got, want) {
		t.Fatalf("search attribute upserts %v, want %v", got, want)
	}
	checkCorrelationIDs(t, f)
}

// heldUpserts are the search attribute upserts of a written draft's hold
// that nobody ends: HOLDING, SETTLING, EXPIRED.
var heldUpserts = []string{"state=" + StateHolding, "state=" + StateSettling, "state=" + StateExpired}

// checkCorrelationIDs: every tool call has its own corr-{16 hex}, and only
// the write carries the idempotency key.
func checkCorrelationIDs(t *testing.T, f *fixture) {
	t.Helper()
	seen := map[string]string{}
	for name, calls := range f.Calls {
		for _, c := range calls {
			req := reflect.ValueOf(c).FieldByName("Request").Interface().(toolkit.Request)
			if !strings.HasPrefix(req.CorrelationID, "corr-") || len(req.CorrelationID) != 21 {
				t.Errorf("%s: correlation id %q", name, req.CorrelationID)
			}
			if prev, dup := seen[req.CorrelationID]; dup {
				t.Errorf("%s and %s share correlation id %s", prev, name, req.CorrelationID)
			}
			seen[req.CorrelationID] = name
			// The write carries the user's key, and so do the hold's calls
			// (the key names the order they settle); reads do not.
			if (req.IdempotencyKey != "") != (name == "CreateDraftOrder" || name == "SettleStock") {
				t.Errorf("%s: idempotency key %q", name, req.IdempotencyKey)
			}
		}
	}
}

func TestQuoteExpiredThenRequotedSamePrice(t *testing.T) {
	f := newFixture(t)
	// The quote lives 15 minutes; the user confirms after 20.
	f.At(20*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	if n := f.Count("GetQuote"); n != 2 {
		t.Fatalf("GetQuote calls = %d, want a quote and a re-quote", n)
	}
	requote := f.Calls["GetQuote"][1].(flowtest.ToolIn[commerce.GetQuoteArgs])
	first := f.Calls["GetQuote"][0].(flowtest.ToolIn[commerce.GetQuoteArgs])
	if requote.Args.ExpectedPriceHash == "" || first.Args.ExpectedPriceHash != "" {
		t.Fatalf("the re-quote must name the prices the user saw: %+v / %+v", first.Args, requote.Args)
	}
	created := f.Calls["CreateDraftOrder"][0].(flowtest.ToolIn[commerce.CreateDraftOrderArgs])
	if !created.Args.Total.ExpiresAt.After(flowtest.T0.Add(20 * time.Minute)) {
		t.Fatalf("created from a stale total expiring %s", created.Args.Total.ExpiresAt)
	}
	checkCorrelationIDs(t, f)
}

func TestPriceChangedThenReconfirmed(t *testing.T) {
	f := newFixture(t)
	f.newPrice, f.priceAfter = 2700, flowtest.T0.Add(16*time.Minute)
	var first, changed Status
	f.At(20*time.Minute, func() {
		first = f.status()
		f.confirmPublished()
	})
	f.At(25*time.Minute, func() {
		changed = f.status()
		// The old hash no longer buys anything.
		f.Env.SignalWorkflow(SignalConfirm, ConfirmSignal{QuoteHash: first.Confirmation.QuoteHash})
	})
	f.At(26*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	if changed.State != StatePriceChanged || changed.Confirmation == nil || !changed.Confirmation.PriceChanged ||
		changed.Confirmation.PreviousQuoteHash != first.Confirmation.QuoteHash || changed.Confirmation.QuoteHash == first.Confirmation.QuoteHash {
		t.Fatalf("after the change: %+v", changed)
	}
	if res.Total.GrandTotal.Amount != (2*2700+899)*119/100 {
		t.Fatalf("created with total %+v", res.Total.GrandTotal)
	}
	// quote, re-quote (PRICE_CHANGED), fresh quote.
	if n := f.Count("GetQuote"); n != 3 {
		t.Fatalf("GetQuote calls = %d", n)
	}
	s := f.rejected(t)
	if !reflect.DeepEqual(s, []string{"confirm:" + workflows.RejectStaleQuoteHash}) {
		t.Fatalf("rejected = %v", s)
	}
	if f.Count("CreateDraftOrder") != 1 {
		t.Fatal("draft order must be created once")
	}
}

// rejected reads the rejected signals from the finished workflow.
func (f *fixture) rejected(t *testing.T) []string {
	t.Helper()
	return flowtest.RejectedReasons(f.status().Rejected)
}

func TestComplianceBlocked(t *testing.T) {
	f := newFixture(t)
	f.Failures["CheckCompliance"] = toolkit.Errorf(toolkit.ComplianceBlocked, "destination is under embargo")
	res := f.run()
	if res.State != StateComplianceBlocked || res.Code != toolkit.ComplianceBlocked {
		t.Fatalf("result = %+v", res)
	}
	if f.Count("CreateDraftOrder")+f.Count("ComputeTotal") != 0 {
		t.Fatal("a blocked basket must not be priced or ordered")
	}
}

func uncertain(f *fixture) {
	f.verdict = commerce.ComplianceVerdict{Verdict: commerce.VerdictUncertain, Confidence: 0.62, RulesetVersion: "compliance-test",
		Reasons: []commerce.ComplianceReason{{Code: "lithium_battery_air", SKU: "SKU-HEADPHONES", Verdict: "uncertain", Message: "lithium battery by air"}}}
}

func TestUncertainThenApproved(t *testing.T) {
	uncertainThenApproved(t, newFixture(t))
}

func uncertainThenApproved(t *testing.T, f *fixture) {
	uncertain(f)
	var waiting Status
	f.At(time.Hour, func() {
		waiting = f.status()
		f.approval("approve", "bob.compliance", "battery inside equipment, PI 967")
	})
	f.At(time.Hour+time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	p := waiting.Approvals.Pending
	if waiting.State != StateAwaitingApproval || p == nil || !approval.IDPattern.MatchString(p.ApprovalID) || !strings.Contains(string(p.Example), p.ApprovalID) {
		t.Fatalf("while waiting: %+v", waiting)
	}
	if a := res.Approval; a == nil || !a.Approved() || a.Approver != "bob.compliance" || a.ApproverRole != "compliance" || a.Evidence == nil || a.Evidence.SnapshotID == "" {
		t.Fatalf("approval = %+v", res.Approval)
	}
	if !contains(f.Upserts, "awaiting=true") || f.Upserts[len(f.Upserts)-1] == "awaiting=true" {
		t.Fatalf("AwaitingApproval must go true then false: %v", f.Upserts)
	}
	// The approval took an hour: the total shown must rest on fresh quotes.
	if n := f.Count("GetQuote"); n != 2 {
		t.Fatalf("GetQuote calls = %d, want a re-quote after the approval", n)
	}
	rec := f.Calls["RecordApproval"][0].(flowtest.ToolIn[support.RecordApprovalArgs])
	if rec.Request.Actor != (toolkit.Actor{Type: toolkit.ActorUser, ID: "bob.compliance"}) || rec.Args.Flow != workflows.FlowDraftOrder {
		t.Fatalf("record input = %+v", rec)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestUncertainThenRejected(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	f.At(time.Hour, func() { f.approval("reject", "carol.admin", "no UN38.3 test summary on file") })
	res := f.run()
	if res.State != StateApprovalRejected || res.Code != toolkit.ComplianceBlocked || !strings.Contains(res.Message, "carol.admin") {
		t.Fatalf("result = %+v", res)
	}
	if f.Count("ComputeTotal") != 0 {
		t.Fatal("a rejected basket must not be priced")
	}
}

func TestLowConfidenceAllowNeedsApproval(t *testing.T) {
	f := newFixture(t)
	f.verdict.Confidence = 0.79
	f.At(time.Minute, func() { f.approval("approve", "carol.admin", "") })
	f.At(2*time.Minute, f.confirmPublished)
	if res := f.run(); res.State != StateDraftCreated || res.Approval == nil {
		t.Fatalf("result = %+v", res)
	}
}

func TestUnknownAndInactiveApproverKeepWaiting(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	f.At(time.Minute, func() { f.approval("approve", "mallory.nobody", "") })
	f.At(2*time.Minute, func() { f.approval("approve", "dave.former", "") })
	// Signed in, but support may not decide a compliance review.
	f.At(150*time.Second, func() { f.approval("approve", "alice.support", "") })
	var mid Status
	f.At(3*time.Minute, func() {
		mid = f.status()
		f.approval("approve", "carol.admin", "")
	})
	f.At(4*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || res.Approval.Approver != "carol.admin" {
		t.Fatalf("result = %+v", res)
	}
	want := []string{"approval:" + workflows.RejectUnknownApprover, "approval:" + workflows.RejectApproverForbidden, "approval:" + workflows.RejectApproverForbidden}
	if got := flowtest.RejectedReasons(mid.Rejected); mid.State != StateAwaitingApproval || !reflect.DeepEqual(got, want) {
		t.Fatalf("mid-way: state %s, rejected %v, want %v", mid.State, got, want)
	}
	if r := mid.Rejected.Rejected[0]; r.Approver != "mallory.nobody" || r.ApprovalID == "" {
		t.Fatalf("rejection record = %+v", r)
	}
}

func TestDuplicateStaleAndMalformedApprovals(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	var id string
	f.At(time.Minute, func() {
		id = f.status().Approvals.Pending.ApprovalID
		f.Env.SignalWorkflow(approval.SignalApproval, "approve please")                                                      // not an object
		f.Env.SignalWorkflow(approval.SignalApproval, map[string]any{"approval_id": id, "decision": "yes", "approver": "x"}) // bad values
		f.Env.SignalWorkflow(approval.SignalApproval, map[string]any{"approval_id": id, "decision": "approve", "approver": "bob.compliance", "extra": 1})
		f.Env.SignalWorkflow(approval.SignalApproval, nil)
		f.Env.SignalWorkflow(approval.SignalApproval, flowtest.SealedAs("bob.compliance", "apr_0000000000000000", "approve", ""))
		f.Env.SignalWorkflow(approval.SignalApproval, flowtest.SealedAs("bob.compliance", id, "approve", ""))
		// Same id again, in the same batch and after the decision.
		f.Env.SignalWorkflow(approval.SignalApproval, flowtest.SealedAs("carol.admin", id, "reject", "second opinion"))
	})
	f.At(2*time.Minute, func() {
		f.Env.SignalWorkflow(approval.SignalApproval, flowtest.SealedAs("carol.admin", id, "reject", "late"))
		f.confirmPublished()
	})
	res := f.run()
	if res.State != StateDraftCreated || res.Approval.Approver != "bob.compliance" {
		t.Fatalf("result = %+v", res)
	}
	want := []string{
		"approval:" + workflows.RejectMalformed, "approval:" + workflows.RejectMalformed, "approval:" + workflows.RejectMalformed, "approval:" + workflows.RejectMalformed,
		"approval:" + workflows.RejectStaleApproval, "approval:" + workflows.RejectDuplicateApproval, "approval:" + workflows.RejectDuplicateApproval,
	}
	if got := f.rejected(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("rejected = %v\nwant       %v", got, want)
	}
	if n := f.Count("RecordApproval"); n != 1 {
		t.Fatalf("RecordApproval calls = %d: only the well-formed, current, first decision is checked", n)
	}
}

func TestApprovalExpires(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	f.in.ApprovalWindow = 2 * time.Hour
	res := f.run()
	if res.State != StateApprovalExpired || res.Code != toolkit.Timeout || res.Approval.Decision != approval.Expired {
		t.Fatalf("result = %+v", res)
	}
	if f.Env.Now().Sub(flowtest.T0) < 2*time.Hour {
		t.Fatalf("expired after %s", f.Env.Now().Sub(flowtest.T0))
	}
}

func TestCancelWhileAwaitingConfirmation(t *testing.T) {
	f := newFixture(t)
	f.At(time.Minute, func() { f.Env.SignalWorkflow(SignalCancel, CancelSignal{Reason: "changed my mind"}) })
	res := f.run()
	if res.State != StateCancelled || f.Count("CreateDraftOrder") != 0 {
		t.Fatalf("result = %+v", res)
	}
	// The query still answers after the end.
	if s := f.status(); s.State != StateCancelled {
		t.Fatalf("state = %s", s.State)
	}
}

func TestCancelWhileAwaitingApproval(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	f.At(time.Minute, func() { f.Env.SignalWorkflow(SignalCancel, nil) })
	res := f.run()
	if res.State != StateCancelled || res.Approval == nil || res.Approval.Decision != approval.Interrupted {
		t.Fatalf("result = %+v", res)
	}
	if !contains(f.Upserts, "awaiting=true") || !contains(f.Upserts, "awaiting=false") {
		t.Fatalf("AwaitingApproval must be set and cleared: %v", f.Upserts)
	}
}

func TestConfirmationTimeout(t *testing.T) {
	f := newFixture(t)
	res := f.run()
	if res.State != StateExpired || res.Code != toolkit.NeedsUserConfirmation || f.Count("CreateDraftOrder") != 0 {
		t.Fatalf("result = %+v", res)
	}
	if got := f.Env.Now().Sub(flowtest.T0); got < DefaultConfirmWindow {
		t.Fatalf("expired after %s, window %s", got, DefaultConfirmWindow)
	}
}

func TestMalformedConfirmsAreRecorded(t *testing.T) {
	f := newFixture(t)
	f.At(time.Minute, func() {
		f.Env.SignalWorkflow(SignalConfirm, []byte{0xff, 0x00})
		f.Env.SignalWorkflow(SignalConfirm, map[string]any{"quote_hash": 42})
		f.Env.SignalWorkflow(SignalConfirm, ConfirmSignal{QuoteHash: "sha256:nope"})
		f.Env.SignalWorkflow(SignalCancel, "not an object")
	})
	f.At(2*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	want := []string{"confirm:" + workflows.RejectMalformed, "confirm:" + workflows.RejectMalformed, "confirm:" + workflows.RejectStaleQuoteHash, "cancel:" + workflows.RejectMalformed}
	if got := f.rejected(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("rejected = %v, want %v", got, want)
	}
}

func TestOutOfStock(t *testing.T) {
	f := newFixture(t)
	f.Failures["GetQuote"] = toolkit.Errorf(toolkit.OutOfStock, "SKU-HEADPHONES: 2 requested, 1 available")
	res := f.run()
	if res.State != StateOutOfStock || res.Code != toolkit.OutOfStock || f.Count("ComputeTotal") != 0 {
		t.Fatalf("result = %+v", res)
	}
}

func TestInvalidAddress(t *testing.T) {
	f := newFixture(t)
	bad := toolkit.Errorf(toolkit.AddressInvalid, "postal_code does not match DE format")
	f.Failures["ChooseOrigins"], f.Failures["CheckCompliance"] = bad, bad
	res := f.run()
	if res.State != StateAddressInvalid || res.Code != toolkit.AddressInvalid {
		t.Fatalf("result = %+v", res)
	}
}

func TestInputIsChecked(t *testing.T) {
	f := newFixture(t)
	f.in.Request.IdempotencyKey = "another-key-1" // not the workflow id's key
	f.Env.ExecuteWorkflow(WorkflowName, f.in)
	if err := f.Env.GetWorkflowError(); startRefusal(err).Code != toolkit.InvalidArgument {
		t.Fatalf("workflow error = %v", err)
	}
}

func TestCancelDuringRequoteWins(t *testing.T) {
	f := newFixture(t)
	f.At(20*time.Minute, func() {
		f.confirmPublished()
		// Sent right behind the confirm: it arrives while the expired
		// quote is refreshed, before anything is written.
		f.Env.SignalWorkflow(SignalCancel, nil)
	})
	res := f.run()
	if res.State != StateCancelled || f.Count("CreateDraftOrder") != 0 || f.Count("GetQuote") != 2 {
		t.Fatalf("result = %+v, creates %d, quotes %d", res, f.Count("CreateDraftOrder"), f.Count("GetQuote"))
	}
}

// TestCreateRetriedAfterExpiredTotalUsesNewCorrelation: when the create
// tool answers NEEDS_USER_CONFIRMATION (its retries outlived the total,
// so it closed this call's two-phase audit as failed) and the re-quote
// gives the same prices, the second create must not reuse the first
// call's correlation id: the audit store refuses a correlation id closed
// as failed (CONFLICT), which would fail the workflow instead of creating
// the draft.
func TestCreateRetriedAfterExpiredTotalUsesNewCorrelation(t *testing.T) {
	f := newFixture(t)
	f.Fail("CreateDraftOrder", toolkit.Errorf(toolkit.NeedsUserConfirmation, "the total expired"), 1)
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	calls := f.CallsOf("CreateDraftOrder")
	if len(calls) != 2 {
		t.Fatalf("CreateDraftOrder calls = %d, want 2", len(calls))
	}
	a, b := calls[0].(flowtest.ToolIn[commerce.CreateDraftOrderArgs]), calls[1].(flowtest.ToolIn[commerce.CreateDraftOrderArgs])
	if a.Args.ConfirmedQuoteHash != b.Args.ConfirmedQuoteHash {
		t.Fatalf("test expects the same confirmed total twice")
	}
	checkCorrelationIDs(t, f)
}
