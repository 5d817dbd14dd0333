package draftordertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// Attack tests of docs/quote-seals.md#what-a-total-is-derived-from: an
// insider who can reach Temporal runs a worker of their own on a private
// task queue, registers a workflow type named DraftOrder, and schedules
// cartwright's tool activity on cartwright's task queue, handing each
// internal step what they like. Whatever they hand in, the total is
// derived from this run's own evidence, or refused; nothing is written.

// insiderStep is one tool call of the insider's script: the tool and its
// input, where "$origins", "$pricing", "$compliance" and "$approval" in a
// compute_total input stand for the snapshots of the script's earlier
// steps of that name.
type insiderStep struct {
	Name  string          `json:"name"`
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
	Refs  bool            `json:"refs,omitempty"`
	// FromPlan fills pricing's warehouse, or compliance's transport
	// mode, from the "origins" step's choice, as a draft order does.
	FromPlan bool `json:"from_plan,omitempty"`
}

// insiderInput is the insider workflow's script and cartwright's queue.
type insiderInput struct {
	Queue string        `json:"queue"`
	Steps []insiderStep `json:"steps"`
}

// insiderResult is every answer, by step name.
type insiderResult struct {
	Answers map[string]toolkit.Response `json:"answers"`
}

// insiderDraftOrder is the insider's own "DraftOrder": it runs its script
// through cartwright's tool activity, one call after the other (JSON
// through reflection, deterministic, which workflowcheck cannot see).
//
//workflowcheck:ignore
func insiderDraftOrder(ctx workflow.Context, in insiderInput) (insiderResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: in.Queue, StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	res := insiderResult{Answers: map[string]toolkit.Response{}}
	for _, st := range in.Steps {
		input := st.Input
		if st.Refs {
			var refs commerce.EvidenceRefs
			_ = json.Unmarshal(st.Input, &refs)
			for _, r := range []*string{&refs.OriginsSnapshotID, &refs.PricingSnapshotID, &refs.ComplianceSnapshotID, &refs.ApprovalSnapshotID} {
				if len(*r) > 1 && (*r)[0] == '$' {
					env := res.Answers[(*r)[1:]]
					*r = env.SnapshotID()
				}
			}
			input, _ = json.Marshal(commerce.ComputeTotalArgs{EvidenceRefs: refs})
		}
		if st.FromPlan {
			var plan commerce.OriginPlan
			env := res.Answers["origins"]
			_ = env.Decode(&plan)
			var args map[string]any
			_ = json.Unmarshal(input, &args)
			if st.Tool == commerce.ToolGetQuote && len(plan.Parcels) > 0 {
				args["ship_from"] = plan.Parcels[0].ShipFrom
			} else {
				args["transport_mode"] = commerce.StrictestMode(plan)
			}
			input, _ = json.Marshal(args)
		}
		sum := sha256.Sum256([]byte(workflow.GetInfo(ctx).WorkflowExecution.RunID + "/" + st.Name))
		req := toolkit.Request{RequestID: "req-insider", UserID: "u_insider", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_insider"},
			CorrelationID: "corr-" + hex.EncodeToString(sum[:8])}
		if st.Tool == commerce.ToolCreateDraftOrder || st.Tool == support.RecordApprovalTool {
			req.IdempotencyKey = "insider-" + st.Name
		}
		var out activities.CallToolResult
		err := workflow.ExecuteActivity(ctx, "CallTool", activities.CallToolInput{Call: toolkit.ToolCall{Tool: st.Tool, Request: req, Input: input}}).Get(ctx, &out)
		if err != nil {
			out.Envelope = toolkit.ErrorResponse(st.Tool, "", toolkit.AsError(err))
		}
		res.Answers[st.Name] = out.Envelope
	}
	return res, nil
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runInsider runs script as a workflow named DraftOrder on a worker of the
// insider's own, against the stack's cartwright worker.
func (s *stack) runInsider(t *testing.T, steps []insiderStep) insiderResult {
	t.Helper()
	return s.runInsiderAs(t, "", steps)
}

func insiderWorkflowID() string { return "draft-order/u_insider/" + uniqueKey("insider") }

// runInsiderAs is runInsider under workflow id id ("": a new one).
func (s *stack) runInsiderAs(t *testing.T, id string, steps []insiderStep) insiderResult {
	t.Helper()
	private := testenv.TaskQueue(t) + "-insider"
	w := worker.New(s.tc, private, worker.Options{})
	w.RegisterWorkflowWithOptions(insiderDraftOrder, workflow.RegisterOptions{Name: draftorder.WorkflowName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	if id == "" {
		id = insiderWorkflowID()
	}
	run, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: private},
		draftorder.WorkflowName, insiderInput{Queue: s.queue, Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	var res insiderResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// wantRefused checks that step answered code (and reason, when given).
func wantRefused(t *testing.T, res insiderResult, step string, code toolkit.Code, reason string) {
	t.Helper()
	env, ok := res.Answers[step]
	if !ok || env.OK || env.Error == nil || env.Error.Code != code || (reason != "" && env.Error.Details["reason"] != reason) {
		t.Errorf("%s: answered ok=%v %+v, want %s %s", step, env.OK, env.Error, code, reason)
	}
}

func (s *stack) mustHaveNoDrafts(t *testing.T) {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM draft_orders`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("draft_orders holds %d rows (%v): the insider wrote a draft", n, err)
	}
}

// quoteSteps are the quote of items to dest by service as a draft order
// makes it, named origins, pricing and compliance.
func quoteSteps(t *testing.T, items []commerce.LineItem, dest commerce.Address, currency, service string) []insiderStep {
	return []insiderStep{
		{Name: "origins", Tool: commerce.ToolChooseOrigins, Input: mustJSON(t, commerce.Order{Items: items, ShipTo: dest, Currency: currency,
			ShippingService: service, Incoterm: commerce.IncotermDDP}.OriginsArgs())},
		{Name: "pricing", Tool: commerce.ToolGetQuote, FromPlan: true, Input: mustJSON(t, commerce.GetQuoteArgs{Items: items, Currency: currency})},
		{Name: "compliance", Tool: commerce.ToolCheckCompliance, FromPlan: true, Input: mustJSON(t, commerce.CheckComplianceArgs{Items: items, Destination: dest})},
	}
}

var (
	nicotine = []commerce.LineItem{{SKU: "ELQ-NIC20-MINT10", Quantity: 1}}
	sydney   = commerce.Address{Name: "Bruce Wayne", Line1: "1 George St", City: "Sydney", Region: "NSW", PostalCode: "2000", Country: "AU"}
)

// TestAttackInsiderHandsInShippingAndTax: (a) the insider's DraftOrder
// prices the blocked basket (nicotine e-liquid to Australia), then hands
// compute_total shipping 0.01 and tax 0 of its own, then hands the write a
// total it made itself: compute_total takes no amounts (INVALID_ARGUMENT),
// derives nothing past the block (COMPLIANCE_BLOCKED), and the write takes
// no total it did not seal.
func TestAttackInsiderHandsInShippingAndTax(t *testing.T) {
	s := newStack(t, worker.Options{})
	aud := func(a int64) commerce.Money { return commerce.Money{Amount: a, Currency: "AUD"} }
	made := commerce.Total{QuoteID: "q_01M8GV2K6WP16KWQAMFY436ETP", Currency: "AUD", Lines: []commerce.TotalLine{{SKU: "ELQ-NIC20-MINT10", Quantity: 1, UnitPrice: aud(707), LineTotal: aud(707)}},
		Subtotal: aud(707), Shipping: aud(1), ShippingOptionID: "standard", Duty: aud(0), Tax: aud(0), Incoterm: commerce.IncotermDDP,
		ShipToCountry: "AU", ShipToRegion: "NSW", GrandTotal: aud(708), DueOnDelivery: aud(0), ExpiresAt: time.Now().Add(time.Hour).UTC()}
	made.QuoteHash, _ = commerce.QuoteHash(made)
	steps := append(quoteSteps(t, nicotine, sydney, "AUD", commerce.ServiceStandard),
		insiderStep{Name: "amounts", Tool: commerce.ToolComputeTotal, Input: mustJSON(t, map[string]any{
			"origins_snapshot_id": "$origins", "pricing_snapshot_id": "$pricing", "compliance_snapshot_id": "$compliance",
			"shipping": map[string]any{"cost": aud(1)}, "duties": map[string]any{"tax": aud(0)}})},
		insiderStep{Name: "total", Tool: commerce.ToolComputeTotal, Refs: true, Input: mustJSON(t, map[string]any{
			"origins_snapshot_id": "$origins", "pricing_snapshot_id": "$pricing", "compliance_snapshot_id": "$compliance"})},
		insiderStep{Name: "write", Tool: commerce.ToolCreateDraftOrder, Input: mustJSON(t, commerce.CreateDraftOrderArgs{Total: made,
			ConfirmedQuoteHash: made.QuoteHash, ShipTo: sydney})},
	)
	res := s.runInsider(t, steps)
	wantRefused(t, res, "compliance", toolkit.ComplianceBlocked, "")
	wantRefused(t, res, "amounts", toolkit.InvalidArgument, "")
	wantRefused(t, res, "total", toolkit.ComplianceBlocked, "compliance_blocked")
	wantRefused(t, res, "write", toolkit.Forbidden, "quote_not_sealed")
	s.mustHaveNoDrafts(t)
}

// TestAttackInsiderDecoyCompliance: (b) the insider names a compliance
// check that cleared something else — a harmless basket, the basket to
// another country, the basket by another mode than its parcels ship —
// beside the real origin choice and prices: compute_total refuses each as
// not a verdict on this basket, and nothing is written.
func TestAttackInsiderDecoyCompliance(t *testing.T) {
	s := newStack(t, worker.Options{})
	tee := []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	powerBank := []commerce.LineItem{{SKU: "VC-PB20K-BLK", Quantity: 1}}
	london := commerce.Address{Name: "Jane Doe", Line1: "10 Downing St", City: "London", PostalCode: "SW1A 2AA", Country: "GB"}
	decoy := func(real []commerce.LineItem, decoys map[string]commerce.CheckComplianceArgs) {
		steps := quoteSteps(t, real, sydney, "AUD", commerce.ServiceExpress)
		for name, args := range decoys {
			steps = append(steps, insiderStep{Name: name, Tool: commerce.ToolCheckCompliance, Input: mustJSON(t, args)},
				insiderStep{Name: "total-" + name, Tool: commerce.ToolComputeTotal, Refs: true, Input: mustJSON(t, map[string]any{
					"origins_snapshot_id": "$origins", "pricing_snapshot_id": "$pricing", "compliance_snapshot_id": "$" + name})})
		}
		res := s.runInsider(t, steps)
		var plan commerce.OriginPlan
		if env := res.Answers["origins"]; !env.OK || env.Decode(&plan) != nil || commerce.StrictestMode(plan) != "air" {
			t.Fatalf("%v to AU by express does not fly (%+v): the attack is not tried", real, env.Error)
		}
		for name := range decoys {
			if env := res.Answers[name]; !env.OK {
				t.Fatalf("%s: the decoy did not clear (%+v): the attack is not tried", name, env.Error)
			}
			wantRefused(t, res, "total-"+name, toolkit.Forbidden, "compliance_not_cleared")
		}
	}
	decoy(nicotine, map[string]commerce.CheckComplianceArgs{
		"decoy-basket":  {Items: tee, Destination: sydney, TransportMode: "air"},
		"decoy-country": {Items: nicotine, Destination: london, TransportMode: "air"},
	})
	// A power bank flies to Australia; by road it would be allowed.
	decoy(powerBank, map[string]commerce.CheckComplianceArgs{"decoy-mode": {Items: powerBank, Destination: sydney, TransportMode: "ground"}})
	s.mustHaveNoDrafts(t)
}

// TestAttackInsiderApprovesItself: (c) an uncertain basket (perfume
// flown to Australia) with an approval the insider recorded itself, allowed_roles left
// empty, decided by a support-role member's genuine seal: the roles that
// may clear the verdict come from the compliance answer (compliance,
// admin), so compute_total refuses it, and nothing is written.
func TestAttackInsiderApprovesItself(t *testing.T) {
	s := newStack(t, worker.Options{})
	perfumes := []commerce.LineItem{perfume}
	const apr = "apr_0123456789abcdef"
	seal := sealtest.Seal(t, "alice.support", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove, Reason: "looks fine"})
	steps := append(quoteSteps(t, perfumes, sydney, "AUD", commerce.ServiceExpress),
		insiderStep{Name: "approval", Tool: support.RecordApprovalTool, Input: mustJSON(t, support.RecordApprovalArgs{Flow: "draft_order",
			Subject: "compliance review", ApprovalID: apr, Decision: support.DecisionApprove, Approver: "alice.support", Reason: "looks fine",
			Seal: seal.Seal})},
		insiderStep{Name: "total", Tool: commerce.ToolComputeTotal, Refs: true, Input: mustJSON(t, map[string]any{
			"origins_snapshot_id": "$origins", "pricing_snapshot_id": "$pricing", "compliance_snapshot_id": "$compliance",
			"approval_snapshot_id": "$approval"})},
		insiderStep{Name: "unapproved", Tool: commerce.ToolComputeTotal, Refs: true, Input: mustJSON(t, map[string]any{
			"origins_snapshot_id": "$origins", "pricing_snapshot_id": "$pricing", "compliance_snapshot_id": "$compliance"})},
	)
	res := s.runInsider(t, steps)
	var v commerce.ComplianceVerdict
	if env := res.Answers["compliance"]; !env.OK || env.Decode(&v) != nil || v.Verdict != commerce.VerdictUncertain {
		t.Fatalf("the basket is not uncertain (%+v, %+v): the attack is not tried", v, env.Error)
	}
	var rec support.ApprovalRecord
	if env := res.Answers["approval"]; !env.OK || env.Decode(&rec) != nil || rec.ApproverRole != support.RoleSupport {
		t.Fatalf("the self-approval was not recorded (%+v, %+v): the attack is not tried", rec, env.Error)
	}
	wantRefused(t, res, "total", toolkit.Forbidden, "compliance_not_cleared")
	wantRefused(t, res, "unapproved", toolkit.Forbidden, "compliance_not_cleared")
	s.mustHaveNoDrafts(t)
}

// TestAttackInsiderForgedSnapshot: (d) the runtime login appends rows of
// its own (docs/evidence.md#row-signatures). The insider copies a genuine
// pricing answer into a row of the next run's own chain, signed by a key
// of its own, and that run's DraftOrder names it for its total:
// compute_total refuses it as evidence_forged, where the same run's own
// pricing snapshot is totalled, and nothing is written.
func TestAttackInsiderForgedSnapshot(t *testing.T) {
	s := newStack(t, worker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	tee := []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	london := commerce.Address{Name: "Jane Doe", Line1: "10 Downing St", City: "London", PostalCode: "SW1A 2AA", Country: "GB"}
	total := func(name, pricing string) insiderStep {
		return insiderStep{Name: name, Tool: commerce.ToolComputeTotal, Refs: true, Input: mustJSON(t, map[string]any{
			"origins_snapshot_id": "$origins", "pricing_snapshot_id": pricing, "compliance_snapshot_id": "$compliance"})}
	}
	first := s.runInsider(t, append(quoteSteps(t, tee, london, "GBP", commerce.ServiceStandard), total("total", "$pricing")))
	if env := first.Answers["total"]; !env.OK {
		t.Fatalf("the genuine quote is not totalled (%+v): the attack is not tried", env.Error)
	}
	priced := first.Answers["pricing"]
	genuine, err := s.store.Get(ctx, priced.SnapshotID())
	if err != nil {
		t.Fatal(err)
	}
	id := insiderWorkflowID()
	own, _ := evidencetest.StoreWithKey(t, s.pool, nil, evidencetest.Key()) // the runtime login, a key of its own
	forged, err := own.Record(ctx, toolkit.Snapshot{Tool: genuine.Tool, ToolVersion: genuine.ToolVersion, Build: genuine.Build,
		Call: toolkit.CallContext{WorkflowID: id, RunID: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", ActivityID: "1",
			ActivityType: "CallTool", WorkflowType: draftorder.WorkflowName, Attempt: 1},
		RequestID: "req-insider", CorrelationID: "corr-00000000000000d4", UserID: "u_insider", InputDigest: genuine.InputDigest,
		Output: genuine.Output, RulesetVersion: genuine.RulesetVersion, TTL: time.Duration(genuine.TTLSeconds) * time.Second,
		Status: toolkit.StatusOK, CreatedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	res := s.runInsiderAs(t, id, append(quoteSteps(t, tee, london, "GBP", commerce.ServiceStandard),
		total("forged", forged), total("own", "$pricing")))
	wantRefused(t, res, "forged", toolkit.Forbidden, "evidence_forged")
	if env := res.Answers["own"]; !env.OK {
		t.Fatalf("the run's own pricing snapshot is not totalled (%+v): the refusal proves nothing", env.Error)
	}
	s.mustHaveNoDrafts(t)
}
