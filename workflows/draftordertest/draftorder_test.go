package draftordertest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

var (
	tshirt  = commerce.LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 2}
	perfume = commerce.LineItem{SKU: "PRF-ROSE-EDP100", Quantity: 1} // UN1266 by air: uncertain
)

// TestSameKeyOneRunOneDraft: two starts with one idempotency key attach to
// one run, which writes one draft-order row; a start after it closed is
// refused rather than run again.
func TestSameKeyOneRunOneDraft(t *testing.T) {
	testenv.Integration(t)
	s := newStack(t, worker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	key := uniqueKey("e2e-same")
	in := input(key, tshirt)
	first, second := s.start(ctx, in), s.start(ctx, in)
	if first.GetID() != second.GetID() || first.GetRunID() != second.GetRunID() {
		t.Fatalf("two runs: %s/%s and %s/%s", first.GetID(), first.GetRunID(), second.GetID(), second.GetRunID())
	}
	st := s.awaitState(ctx, first.GetID(), draftorder.StateNeedsConfirm)
	if err := s.tc.SignalWorkflow(ctx, first.GetID(), "", draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: st.Confirmation.QuoteHash}); err != nil {
		t.Fatal(err)
	}
	a, err := drafttest.Result(ctx, s.tc, first.GetID())
	if err != nil {
		t.Fatal(err)
	}
	b, err := drafttest.Result(ctx, s.tc, second.GetID())
	if err != nil {
		t.Fatal(err)
	}
	if a.State != draftorder.StateDraftCreated || a.DraftOrder == nil || b.DraftOrder == nil || a.DraftOrder.DraftOrderID != b.DraftOrder.DraftOrderID {
		t.Fatalf("results: %+v / %+v", a, b)
	}
	// The written draft's run holds it until the user cancels: then the
	// run closes, its stock released.
	if err := s.tc.SignalWorkflow(ctx, first.GetID(), "", draftorder.SignalCancel, draftorder.CancelSignal{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	var closed draftorder.Result
	if err := first.Get(ctx, &closed); err != nil || closed.Settled == nil || closed.Settled.State != draftorder.StateCancelled {
		t.Fatalf("after the cancel: %+v, %v", closed, err)
	}
	// After the run closed, a start with the same key is refused by the
	// reuse policy and the client hands back the closed run: same run,
	// same draft order.
	third := s.start(ctx, in)
	var c draftorder.Result
	if err := third.Get(ctx, &c); err != nil || third.GetRunID() != first.GetRunID() || c.DraftOrder.DraftOrderID != a.DraftOrder.DraftOrderID {
		t.Fatalf("start after close: run %s (first %s), result %+v, %v", third.GetRunID(), first.GetRunID(), c, err)
	}
	if n := s.draftRows(ctx, key); n != 1 {
		t.Fatalf("draft_orders rows for the key = %d, want 1", n)
	}
	// The origin choice, pricing, compliance, total, create, the release.
	if n := s.verifyEvidence(ctx, first.GetID(), first.GetRunID()); n != 6 {
		t.Fatalf("verified %d activity results, want 6", n)
	}
	s.replay(ctx, first.GetID(), first.GetRunID())
}

// TestDrivenByTheCLI drives an uncertain basket the way support staff and
// a backend would from outside: the approval is found with a visibility
// query on AwaitingApproval, a decision typed with an active compliance
// officer's name but no seal is refused (unauthenticated_decision) and the
// current details say so within a second, an inactive approver is refused,
// the sealed decision and the confirmation are sent with `temporal
// workflow signal` (docs/approvals.md#sealed-decisions).
func TestDrivenByTheCLI(t *testing.T) {
	testenv.Integration(t)
	s := newStack(t, worker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	in := input(uniqueKey("e2e-cli"), perfume)
	in.ShipTo = commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	// Perfume by air needs review; by road within the EU it is allowed
	// (compliance follows the chosen option's mode).
	in.ShippingService = commerce.ServiceExpress
	run := s.start(ctx, in)
	id := run.GetID()

	st := s.awaitState(ctx, id, draftorder.StateAwaitingApproval)
	approvalID := st.Approvals.Pending.ApprovalID
	s.checkDeclared(ctx, id, approvalID)
	query := fmt.Sprintf(`AwaitingApproval=true AND CartwrightFlow="%s" AND WorkflowId="%s"`, workflows.FlowDraftOrder, id)
	awaitListed(ctx, t, query, id, true)

	signal := func(name string, payload any) {
		b, _ := json.Marshal(payload)
		cli(t, "workflow", "signal", "--workflow-id", id, "--name", name, "--input", string(b))
	}
	// The raw CLI, no credential, naming someone allowed to decide.
	sent := time.Now()
	signal(approval.SignalApproval, map[string]string{"approval_id": approvalID, "decision": "approve", "approver": "bob.compliance"})
	details := s.awaitRefusal(ctx, id, workflows.RejectUnauthenticated)
	if took := time.Since(sent); took > time.Second {
		t.Errorf("the refusal reached the current details %s after the signal, want within a second", took)
	}
	if !strings.HasPrefix(details, "**DECISION REFUSED") || !strings.Contains(details, "/codec/login") {
		t.Errorf("current details after an unsealed decision:\n%s", details)
	}
	if st, _ = s.status(ctx, id); st.State != draftorder.StateAwaitingApproval || len(st.Approvals.Decisions) != 0 {
		t.Fatalf("an unsealed decision decided: %+v", st)
	}
	seal := func(staff, reason string) map[string]any {
		d := sealtest.Seal(t, staff, support.Decision{ApprovalID: approvalID, Decision: "approve", Reason: reason})
		return map[string]any{"approval_id": d.ApprovalID, "decision": d.Decision, "approver": d.Approver, "reason": d.Reason, "seal": d.Seal}
	}
	signal(approval.SignalApproval, seal("dave.former", "still here"))
	bob := seal("bob.compliance", "limited quantity, 100 ml inner packaging")
	signal(approval.SignalApproval, bob)
	st = s.awaitState(ctx, id, draftorder.StateNeedsConfirm)
	if got := st.Rejected.Rejected; len(got) != 2 || got[0].Reason != workflows.RejectUnauthenticated || got[1].Reason != workflows.RejectApproverForbidden {
		t.Fatalf("rejected signals = %+v", got)
	}
	signal(draftorder.SignalConfirm, map[string]string{"quote_hash": st.Confirmation.QuoteHash})

	res, err := drafttest.Result(ctx, s.tc, run.GetID())
	if err != nil {
		t.Fatal(err)
	}
	if res.State != draftorder.StateDraftCreated || res.Approval == nil || res.Approval.Approver != "bob.compliance" || res.Approval.Evidence == nil ||
		res.Approval.SealID != bob["seal"].(*support.Seal).ID() {
		t.Fatalf("result = %+v", res)
	}
	awaitListed(ctx, t, query, id, false)
	// the origin choice, pricing, compliance, the approval record, total,
	// create (the approval came within the quote's TTL: no re-quote); the
	// refusals of the unsealed decision and of the inactive approver are
	// failed activities, checked next.
	if n := s.verifyEvidence(ctx, id, run.GetRunID()); n != 6 {
		t.Fatalf("verified %d activity results, want 6", n)
	}
	// The two refused decisions are failed activities (red in the Web
	// UI), each tried once, with the refusal's code and its evidence.
	s.refusedDecisions(ctx, id, run.GetRunID(), toolkit.Unauthorized, toolkit.Forbidden)
	s.replay(ctx, id, run.GetRunID())
}

// refusedDecisions checks that the history holds exactly the refused staff
// decisions codes as failed support.record_approval activities
// (docs/approvals.md#what-staff-see): non-retryable ApplicationErrors of
// the refusal's code, one attempt each, whose details carry the refusal's
// envelope and its evidence snapshot; every other activity completed.
func (s *stack) refusedDecisions(ctx context.Context, id, runID string, codes ...toolkit.Code) {
	s.t.Helper()
	iter := s.tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	attempts := map[int64]int32{}
	var got []toolkit.Code
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			s.t.Fatal(err)
		}
		if st := ev.GetActivityTaskStartedEventAttributes(); st != nil {
			attempts[st.GetScheduledEventId()] = st.GetAttempt()
		}
		f := ev.GetActivityTaskFailedEventAttributes()
		if f == nil {
			continue
		}
		app := f.GetFailure().GetApplicationFailureInfo()
		if app == nil || !app.GetNonRetryable() || attempts[f.GetScheduledEventId()] != 1 {
			s.t.Fatalf("event %d: a failed activity that is not a refusal tried once: %v (attempt %d)", ev.GetEventId(), f.GetFailure(), attempts[f.GetScheduledEventId()])
		}
		var te toolkit.Error
		var res struct {
			Envelope toolkit.Response `json:"envelope"`
		}
		if err := clienttest.DataConverter().FromPayloads(app.GetDetails(), &te, &res); err != nil {
			s.t.Fatalf("event %d: details: %v", ev.GetEventId(), err)
		}
		if string(te.Code) != app.GetType() || res.Envelope.OK || res.Envelope.Tool != support.RecordApprovalTool {
			s.t.Fatalf("event %d: failure %s carries %+v", ev.GetEventId(), app.GetType(), res.Envelope)
		}
		s.checkSnapshot(ctx, ev.GetEventId(), id, res.Envelope)
		got = append(got, te.Code)
	}
	if !slices.Equal(got, codes) {
		s.t.Fatalf("refused decisions in the history: %v, want %v", got, codes)
	}
}

// awaitListed polls `temporal workflow list --query` until id is (or is no
// longer) listed: visibility is updated asynchronously.
func awaitListed(ctx context.Context, t *testing.T, query, id string, want bool) {
	t.Helper()
	for strings.Contains(cli(t, "workflow", "list", "--query", query), id) != want {
		if ctx.Err() != nil {
			t.Fatalf("%s listed=%v never held for %q", id, want, query)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitRefusal waits for the current details to show a refusal for reason
// (the status query's last_refusal) and returns the details.
func (s *stack) awaitRefusal(ctx context.Context, id, reason string) string {
	s.t.Helper()
	for {
		st, err := s.status(ctx, id)
		if p := st.Approvals.Pending; err == nil && p != nil && p.LastRefusal != nil && p.LastRefusal.Reason == reason {
			return s.metadata(ctx, id).GetCurrentDetails()
		}
		if ctx.Err() != nil {
			s.t.Fatalf("no %s refusal shown: %+v", reason, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *stack) metadata(ctx context.Context, id string) *sdkpb.WorkflowMetadata {
	s.t.Helper()
	v, err := s.tc.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	if err != nil {
		s.t.Fatal(err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		s.t.Fatal(err)
	}
	return &md
}

// checkDeclared reads the workflow metadata the Web UI reads: the signals
// and the status query are declared with descriptions, and the current
// details say which approval is pending.
func (s *stack) checkDeclared(ctx context.Context, id, approvalID string) {
	s.t.Helper()
	v, err := s.tc.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	if err != nil {
		s.t.Fatal(err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		s.t.Fatal(err)
	}
	described := map[string]bool{}
	for _, d := range append(md.GetDefinition().GetSignalDefinitions(), md.GetDefinition().GetQueryDefinitions()...) {
		described[d.GetName()] = d.GetDescription() != ""
	}
	for _, name := range []string{draftorder.SignalConfirm, draftorder.SignalCancel, approval.SignalApproval, workflows.QueryStatus} {
		if !described[name] {
			s.t.Errorf("%s is not declared with a description: %v", name, described)
		}
	}
	if !strings.Contains(md.GetCurrentDetails(), approvalID) {
		s.t.Errorf("current details do not name approval %s:\n%s", approvalID, md.GetCurrentDetails())
	}
}
