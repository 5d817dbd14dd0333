package wiring_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// outsiderCall is one tool call an outsider's workflow asks cartwright's
// tool activity for, on cartwright's task queue.
type outsiderCall struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
}

// outsiderInput is the outsider workflow's input: the task queue
// cartwright's worker polls and the calls to make there.
type outsiderInput struct {
	TaskQueue string         `json:"task_queue"`
	Calls     []outsiderCall `json:"calls"`
}

// outsiderFlow is a workflow of someone else's: registered under any name
// on a worker of its own, it schedules cartwright's tool activity
// (CallTool) on cartwright's task queue and returns what came back.
func outsiderFlow(ctx workflow.Context, in outsiderInput) ([]toolkit.Response, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: in.TaskQueue, StartToCloseTimeout: 20 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	out := make([]toolkit.Response, 0, len(in.Calls))
	for i, c := range in.Calls {
		req := toolkit.Request{RequestID: "req-outsider-" + hex.EncodeToString([]byte{byte(i)}), UserID: "u_outsider",
			Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "workflow"}, IdempotencyKey: "outsider-key-0001",
			Currency: "EUR"}
		var res activities.CallToolResult
		err := workflow.ExecuteActivity(ctx, "CallTool", activities.CallToolInput{Call: toolkit.ToolCall{
			Tool: c.Tool, Request: req, Input: c.Input}}).Get(ctx, &res)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Envelope)
	}
	return out, nil
}

// outsiderWorker runs outsiderFlow under each of names on a private task
// queue of its own, as anyone who can reach the Temporal frontend can.
func outsiderWorker(t *testing.T, st *wiringtest.Stack, names ...string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	tq := "outsider-" + hex.EncodeToString(b)
	w := worker.New(st.Temporal, tq, worker.Options{})
	for _, n := range names {
		w.RegisterWorkflowWithOptions(outsiderFlow, workflow.RegisterOptions{Name: n})
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return tq
}

// runOutsider runs the outsider's workflow type wt with calls and returns
// the answers and its workflow id.
func runOutsider(t *testing.T, ctx context.Context, st *wiringtest.Stack, tq, wt string, calls []outsiderCall) ([]toolkit.Response, string) {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	id := "outsider/" + wt + "/" + hex.EncodeToString(b)
	run, err := st.Temporal.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: tq}, wt,
		outsiderInput{TaskQueue: st.TaskQueue, Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	var res []toolkit.Response
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("%s: %v", wt, err)
	}
	if len(res) != len(calls) {
		t.Fatalf("%s: %d answers for %d calls", wt, len(res), len(calls))
	}
	return res, id
}

// mustBeRefused: every answer is FORBIDDEN with reason, and nothing the
// run asked for left an evidence snapshot or an audit row.
func mustBeRefused(t *testing.T, st *wiringtest.Stack, wt, workflowID, reason string, calls []outsiderCall, res []toolkit.Response) {
	t.Helper()
	for i, env := range res {
		e := env.Error
		if env.OK || e == nil || e.Code != toolkit.Forbidden || e.Details["reason"] != reason {
			t.Errorf("%s calling %s: ok=%v error %+v, want FORBIDDEN %s", wt, calls[i].Tool, env.OK, e, reason)
		}
	}
	var snaps, audits int
	ctx := context.Background()
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE workflow_id = $1`, workflowID).Scan(&snaps); err != nil {
		t.Fatal(err)
	}
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE workflow_id = $1`, workflowID).Scan(&audits); err != nil {
		t.Fatal(err)
	}
	if snaps != 0 || audits != 0 {
		t.Errorf("%s (%s): %d evidence snapshots and %d audit rows, want none", wt, workflowID, snaps, audits)
	}
}

// TestAttackOutsiderWorkflowTypeIsRefused (docs/quote-seals.md#who-may-call-a-step):
// a worker of one's own, on a private task queue, registers workflow
// types cartwright does not (one named like a plausible flow), and
// schedules cartwright's tool activity on the cartwright task queue: a
// read tool, the compliance check, the total, the write and an approval.
// Every call is refused FORBIDDEN (workflow_unregistered) before the tool
// runs; no evidence, no audit row, no draft order.
func TestAttackOutsiderWorkflowTypeIsRefused(t *testing.T) {
	testenv.Integration(t)
	st := wiringtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	items := []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	dest := commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}
	calls := []outsiderCall{
		{commerce.ToolGetQuote, mustJSON(t, commerce.GetQuoteArgs{Items: items, Currency: "EUR"})},
		{commerce.ToolCheckCompliance, mustJSON(t, commerce.CheckComplianceArgs{Items: items, Destination: dest})},
		{commerce.ToolComputeTotal, json.RawMessage(`{}`)},
		{commerce.ToolCreateDraftOrder, json.RawMessage(`{}`)},
		{support.RecordApprovalTool, mustJSON(t, support.RecordApprovalArgs{Flow: "draft_order", Subject: "compliance review",
			ApprovalID: "apr_0123456789abcdef", Decision: "approve", Approver: "alice.support"})},
		{"no.such_tool", json.RawMessage(`{}`)},
	}
	names := []string{"ShadowOrder", "DraftOrderV2"}
	tq := outsiderWorker(t, st, names...)
	for _, wt := range names {
		res, id := runOutsider(t, ctx, st, tq, wt, calls)
		mustBeRefused(t, st, wt, id, "workflow_unregistered", calls, res)
	}
	var drafts int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM draft_orders`).Scan(&drafts); err != nil || drafts != 0 {
		t.Fatalf("draft_orders holds %d rows (%v)", drafts, err)
	}
}

// TestAttackStepsOnlyForTheirOwners (docs/quote-seals.md#who-may-call-a-step):
// runs of workflow types cartwright does register, but which do not own
// the draft order's steps — the onboarding, the reconcile job, the
// generic tool call — ask for the origin choice, the total, the write
// and (all but the onboarding, which waits for staff decisions itself)
// the recording of an approval. Each is refused FORBIDDEN internal_tool
// before the tool runs; a read tool in the same run still answers.
func TestAttackStepsOnlyForTheirOwners(t *testing.T) {
	testenv.Integration(t)
	st := wiringtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	steps := []outsiderCall{
		{commerce.ToolChooseOrigins, json.RawMessage(`{}`)},
		{commerce.ToolComputeTotal, json.RawMessage(`{}`)},
		{commerce.ToolCreateDraftOrder, json.RawMessage(`{}`)},
	}
	approval := outsiderCall{support.RecordApprovalTool, mustJSON(t, support.RecordApprovalArgs{Flow: "draft_order",
		Subject: "compliance review", ApprovalID: "apr_0123456789abcdef", Decision: "approve", Approver: "alice.support"})}
	types := map[string][]outsiderCall{
		onboardingflow.WorkflowName:       steps,
		maintenance.ReconcileWorkflowName: append(append([]outsiderCall(nil), steps...), approval),
		toolcall.WorkflowName:             append(append([]outsiderCall(nil), steps...), approval),
	}
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	tq := outsiderWorker(t, st, names...)
	for wt, calls := range types {
		res, id := runOutsider(t, ctx, st, tq, wt, calls)
		mustBeRefused(t, st, wt, id, "internal_tool", calls, res)
	}
	// The control: the same kind of run reaches a tool that is no flow's
	// step, so the refusals above are about ownership, not the rig.
	items := []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	res, _ := runOutsider(t, ctx, st, tq, maintenance.ReconcileWorkflowName,
		[]outsiderCall{{commerce.ToolGetQuote, mustJSON(t, commerce.GetQuoteArgs{Items: items, Currency: "EUR"})}})
	if !res[0].OK {
		t.Fatalf("a registered type's read call: %+v", res[0].Error)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
