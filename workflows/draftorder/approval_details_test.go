package draftorder

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// details reads the current details the Web UI shows, through the query the
// UI itself sends.
func (f *fixture) details() string {
	f.T.Helper()
	v, err := f.Env.QueryWorkflow("__temporal_workflow_metadata")
	if err != nil {
		f.T.Fatalf("metadata query: %v", err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		f.T.Fatal(err)
	}
	return md.GetCurrentDetails()
}

// uncertainWithSource is uncertain with a rule that names its source.
func uncertainWithSource(f *fixture) {
	uncertain(f)
	f.verdict.Reasons[0].Source = "https://www.iata.org/lithium-batteries"
}

// TestRefusalShownInCurrentDetails: every refused decision replaces the
// previous one in the current details, with its reason and what to send
// instead, until a valid decision ends the wait.
func TestRefusalShownInCurrentDetails(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	var before, unknown, noReason, extraField, stale string
	var pending *approval.Pending
	f.At(time.Minute, func() {
		before = f.details()
		f.approval("approve", "caol.admin", "") // carol.admin with its r lost
	})
	f.At(2*time.Minute, func() {
		unknown = f.details()
		f.approval("reject", "carol.admin", "")
	})
	f.At(3*time.Minute, func() {
		noReason = f.details()
		id := f.status().Approvals.Pending.ApprovalID
		f.Env.SignalWorkflow(approval.SignalApproval, map[string]any{"approval_id": id, "decision": "approve", "approver": "carol.admin", "note": "ok"})
	})
	f.At(4*time.Minute, func() {
		extraField = f.details()
		f.Env.SignalWorkflow(approval.SignalApproval, approval.Signal{ApprovalID: "apr_0123456789abcdef", Decision: "approve", Approver: "carol.admin"})
	})
	f.At(5*time.Minute, func() {
		stale = f.details()
		pending = f.status().Approvals.Pending
		f.approval("approve", "carol.admin", "")
	})
	var after string
	f.At(6*time.Minute, func() {
		after = f.details()
		f.confirmPublished()
	})
	if res := f.run(); res.State != StateDraftCreated || res.Approval.Approver != "carol.admin" {
		t.Fatalf("result = %+v", res)
	}
	if strings.Contains(before, "DECISION REFUSED") {
		t.Fatalf("a refusal shown before any decision:\n%s", before)
	}
	for name, c := range map[string]struct{ details, want string }{
		"unknown approver":  {unknown, "`unknown_approver`, approver caol.admin"},
		"reject, no reason": {noReason, "a rejection needs a reason"},
		"unknown field":     {extraField, `unknown field "note"`},
		"stale id":          {stale, "`stale_approval_id`"},
	} {
		if !strings.HasPrefix(c.details, "**DECISION REFUSED") || !strings.Contains(c.details, c.want) ||
			!strings.Contains(c.details, "**Instead:**") || !strings.Contains(c.details, "the workflow still waits") {
			t.Errorf("%s: current details do not show the refusal (want %q):\n%s", name, c.want, c.details)
		}
	}
	if !strings.Contains(unknown, "sign in at the codec server with your own staff token") || !strings.Contains(stale, "approval_id "+pending.ApprovalID) {
		t.Errorf("what to send instead is missing:\n%s\n---\n%s", unknown, stale)
	}
	// Only the last refusal is shown.
	if strings.Contains(stale, "unknown_approver") {
		t.Errorf("an older refusal is still shown:\n%s", stale)
	}
	if r := pending.LastRefusal; r == nil || r.Reason != workflows.RejectStaleApproval || r.Instead == "" {
		t.Errorf("status last_refusal = %+v", r)
	}
	if strings.Contains(after, "DECISION REFUSED") || !strings.Contains(after, "confirm the total") || !strings.Contains(after, "\n`{\"quote_hash\":\"") {
		t.Errorf("after the approval the details still show the refusal:\n%s", after)
	}
	// The confirm payload comes before the facts, inside the UI's fixed-height frame.
	if p, f := strings.Index(after, "`{\"quote_hash\""), strings.Index(after, "- total:"); p < 0 || f < 0 || p > f {
		t.Errorf("the confirm payload does not come before the facts:\n%s", after)
	}
}

// TestApprovalFactsAndPayloads: the details give a compliance reviewer the
// product, units, value, shipping service and mode, and the rule with its
// source, without personal data; the payloads are short single-line JSON,
// and the status query gives them as JSON objects.
func TestApprovalFactsAndPayloads(t *testing.T) {
	f := newFixture(t)
	uncertainWithSource(f)
	f.in.Items = []commerce.LineItem{{SKU: "SKU-HEADPHONES", Quantity: 3}, {SKU: "SKU-CABLE", Quantity: 2}}
	var details string
	var st Status
	f.At(time.Minute, func() {
		details, st = f.details(), f.status()
		f.approval("reject", "bob.compliance", "no UN38.3 summary")
	})
	if res := f.run(); res.State != StateApprovalRejected {
		t.Fatalf("result = %+v", res)
	}
	for _, want := range []string{
		"destination country: DE",
		`3 × SKU-HEADPHONES "Headphones" at 25.00 EUR`,
		"5 unit(s) in 2 line(s), goods value 125.00 EUR",
		"shipping: standard service by DHL, transport mode air",
		"compliance verdict: uncertain, confidence 0.62 (approval needed below 0.80)",
		"rule lithium_battery_air (uncertain, SKU-HEADPHONES): lithium battery by air Source: https://www.iata.org/lithium-batteries",
	} {
		if !strings.Contains(details, want) {
			t.Errorf("current details lack %q:\n%s", want, details)
		}
	}
	for _, pii := range []string{f.in.ShipTo.Name, f.in.ShipTo.Line1, f.in.ShipTo.City, f.in.ShipTo.PostalCode} {
		if strings.Contains(details, pii) {
			t.Errorf("current details hold personal data %q", pii)
		}
	}
	p := st.Approvals.Pending
	for decision, raw := range map[string]json.RawMessage{"approve": p.Example, "reject": p.ExampleReject} {
		var sig map[string]string
		if err := json.Unmarshal(raw, &sig); err != nil || sig["approval_id"] != p.ApprovalID || sig["decision"] != decision {
			t.Errorf("status example for %s = %s (%v)", decision, raw, err)
		}
		// The details space the JSON out so the UI can wrap it.
		line := "\n`" + strings.NewReplacer(`","`, `", "`, `":"`, `": "`).Replace(string(raw)) + "`\n"
		if !strings.Contains(details, line) {
			t.Errorf("the %s payload is not alone on its line in the details:\n%s", decision, details)
		}
		if len(raw) > 110 {
			t.Errorf("the %s payload is %d characters, too long to show whole", decision, len(raw))
		}
	}
}

// TestOneApprovalTimer: refused decisions do not start more window timers;
// the one timer is cancelled when the decision comes.
func TestOneApprovalTimer(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	// Window timers are the only ones longer than the confirmation window.
	started, cancelled := 0, 0
	windows := map[string]bool{}
	f.Env.SetOnTimerScheduledListener(func(id string, d time.Duration) {
		// (the hold's timer, once the draft is written at 5 min, is not one)
		if d > time.Hour && f.Env.Now().Before(flowtest.T0.Add(5*time.Minute)) {
			started++
			windows[id] = true
		}
	})
	f.Env.SetOnTimerCanceledListener(func(id string) {
		if windows[id] {
			cancelled++
		}
	})
	f.At(time.Minute, func() { f.approval("approve", "mallory.nobody", "") })
	f.At(2*time.Minute, func() { f.approval("reject", "alice.support", "") })
	f.At(3*time.Minute, func() { f.approval("approve", "dave.former", "") })
	f.At(4*time.Minute, func() { f.approval("approve", "carol.admin", "") })
	f.At(5*time.Minute, f.confirmPublished)
	if res := f.run(); res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	if n := len(f.status().Rejected.Rejected); n != 3 {
		t.Fatalf("%d refusals, want 3", n)
	}
	if started != 1 || cancelled != 1 {
		t.Errorf("window timers: %d started, %d cancelled; want one, cancelled by the decision", started, cancelled)
	}
}

// TestApprovalWindowStillExpires: the one timer ends the wait even after
// refusals woke it.
func TestApprovalWindowStillExpires(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	f.in.ApprovalWindow = 2 * time.Hour
	f.At(time.Hour, func() { f.approval("approve", "mallory.nobody", "") })
	res := f.run()
	if res.State != StateApprovalExpired || res.Code != toolkit.Timeout {
		t.Fatalf("result = %+v", res)
	}
	if got := f.Env.Now().Sub(flowtest.T0); got < 2*time.Hour || got > 2*time.Hour+time.Minute {
		t.Fatalf("expired after %s, want the 2 h window", got)
	}
}

// TestFinalStateIsSearchable: every outcome ends with CartwrightState set
// to the final state, the column support staff add to the Web UI's list
// to tell a rejected or blocked draft order from a created one (all of
// them are "Completed").
func TestFinalStateIsSearchable(t *testing.T) {
	cases := map[string]func(f *fixture){
		StateApprovalRejected: func(f *fixture) {
			uncertain(f)
			f.At(time.Minute, func() { f.approval("reject", "bob.compliance", "no permit") })
		},
		StateComplianceBlocked: func(f *fixture) {
			f.Failures["CheckCompliance"] = toolkit.Errorf(toolkit.ComplianceBlocked, "destination is under embargo")
		},
		StateAddressInvalid: func(f *fixture) {
			f.Failures["ChooseOrigins"] = toolkit.Errorf(toolkit.AddressInvalid, "postal_code does not match DE format")
		},
		StateDraftCreated: func(f *fixture) { f.At(time.Minute, f.confirmPublished) },
		StateNotFound: func(f *fixture) {
			f.Failures["GetQuote"] = toolkit.Errorf(toolkit.NotFound, "unknown or discontinued sku: [SKU-NOPE]")
		},
		StateRefused: func(f *fixture) {
			f.Failures["ChooseOrigins"] = toolkit.Errorf(toolkit.InvalidArgument, "no service carries a parcel this heavy")
		},
	}
	for want, setup := range cases {
		f := newFixture(t)
		setup(f)
		if res := f.run(); res.State != want {
			t.Fatalf("%s: result = %+v", want, res)
		}
		last, wantLast := f.Upserts[len(f.Upserts)-1], "state="+want
		if want == StateDraftCreated {
			// The written draft's run goes on holding it; unpaid, the
			// hold ends EXPIRED. The draft's result stays DRAFT_CREATED.
			wantLast = "state=" + StateExpired
		}
		if last != wantLast {
			t.Errorf("%s: last search attribute upsert %q, want state=%s (upserts %v)", want, last, want, f.Upserts)
		}
	}
}
