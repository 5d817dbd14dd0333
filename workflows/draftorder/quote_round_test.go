package draftorder

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// roundTools are a quote round's six tools, in the order it calls them.
var roundTools = func() []string {
	var out []string
	for _, st := range activities.QuoteRoundSteps {
		out = append(out, st.Tool)
	}
	return out
}()

func TestQuoteRoundAnswersTheFirstRound(t *testing.T) {
	f, _ := asStarted(t)
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || len(res.Evidence) != 7 {
		t.Fatalf("result = %+v", res)
	}
	// One round made the six read-only calls; the workflow itself called
	// only the write.
	if f.Rounds != 1 || !reflect.DeepEqual(f.Direct, []string{commerce.ToolCreateDraftOrder}) {
		t.Fatalf("%d round(s), direct calls %v", f.Rounds, f.Direct)
	}
	if !reflect.DeepEqual(f.ToolCalls, append(append([]string{}, roundTools...), commerce.ToolCreateDraftOrder)) {
		t.Fatalf("tool calls %v", f.ToolCalls)
	}
	// The evidence names each step of round 1 once, in the workflow's order.
	var steps []string
	for _, e := range res.Evidence {
		steps = append(steps, e.Step)
	}
	want := []string{"q1/origins", "q1/shipping", "q1/pricing", "q1/compliance", "q1/duties", "q1/total", "create"}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("evidence steps %v, want %v", steps, want)
	}
	checkCorrelationIDs(t, f)
}

func TestQuoteRoundThatFailsLeavesTheCallsToTheWorkflow(t *testing.T) {
	f, _ := asStarted(t)
	// Pricing's first attempt meets an outage: the round fails (one
	// attempt, no retries) and the workflow makes every call itself.
	f.Fail("GetQuote", toolkit.Errorf(toolkit.UpstreamError, "database unavailable"), 1)
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	want := append(append([]string{}, roundTools...), commerce.ToolCreateDraftOrder)
	got := append([]string{}, f.Direct...)
	slices.Sort(got)
	slices.Sort(want)
	if f.Rounds != 1 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d round(s), direct calls %v, want %v", f.Rounds, f.Direct, want)
	}
}

func TestQuoteRoundStopsWhereSupportStaffDecide(t *testing.T) {
	f, _ := asStarted(t)
	f.verdict.Confidence = 0.79 // below the approval threshold
	f.At(time.Minute, func() { f.approval("approve", "carol.admin", "") })
	f.At(2*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || res.Approval == nil {
		t.Fatalf("result = %+v", res)
	}
	// The round stopped after compliance: duties and the total were
	// computed after the approval, by the workflow.
	want := []string{commerce.ToolDutiesAndTaxes, commerce.ToolComputeTotal, support.RecordApprovalTool, commerce.ToolCreateDraftOrder}
	got := append([]string{}, f.Direct...)
	slices.Sort(got)
	slices.Sort(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("direct calls %v, want %v", f.Direct, want)
	}
}

func TestQuoteRoundAnswerForAnotherInputIsNotTaken(t *testing.T) {
	f, _ := asStarted(t)
	// A round whose shipping call had another input than the workflow's
	// (a round that computed differently): the workflow does not take it
	// and asks shipping itself; a later answer is still taken when its
	// input is the workflow's byte for byte.
	f.TamperRound = func(r *activities.QuoteRoundResult) {
		for i := range r.Calls {
			if r.Calls[i].Tool == commerce.ToolQuoteShipping {
				r.Calls[i].InputSHA256 = activities.InputSHA256([]byte(`{"items":[]}`))
			}
		}
	}
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	if f.Direct[0] != commerce.ToolQuoteShipping || f.Count("QuoteShipping") != 2 {
		t.Fatalf("direct calls %v, %d shipping calls: the tampered answer was taken", f.Direct, f.Count("QuoteShipping"))
	}
}

func TestQuoteRoundAnswerIsTakenOnceAndOnlyForTheCallItMade(t *testing.T) {
	args := commerce.QuoteShippingArgs{Items: []commerce.LineItem{{SKU: "SKU-1", Quantity: 1}}, Currency: "EUR", ShipFrom: "DE-BER"}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	call := flow.Call{Tool: commerce.ToolQuoteShipping, Req: toolkit.Request{CorrelationID: "corr-shipping"}, Args: args}
	env := toolkit.Response{OK: true, Tool: call.Tool, Data: json.RawMessage(`{"options":[]}`)}
	answers := roundAnswers{call.Req.CorrelationID: {Step: activities.StepShipping, Tool: call.Tool,
		InputSHA256: activities.PrefetchSHA256(args, raw), Envelope: env}}

	// Calls the round did not make, each off by one thing, get nothing and
	// leave the answer where it is.
	otherTool, otherStep, otherInput := call, call, call
	otherTool.Tool = commerce.ToolGetQuote
	otherStep.Req.CorrelationID = "corr-pricing"
	otherArgs := args
	otherArgs.ShipFrom = "FR-PAR"
	otherInput.Args = otherArgs
	for name, c := range map[string]flow.Call{"another tool": otherTool, "another step": otherStep, "another input": otherInput} {
		if _, ok := answers.take(c); ok {
			t.Fatalf("%s took the round's answer", name)
		}
	}
	if got, ok := answers.take(call); !ok || !reflect.DeepEqual(got, env) {
		t.Fatalf("the round's own call got %+v, %v", got, ok)
	}
	// The answer is used once: the same call again is the workflow's to make.
	if _, ok := answers.take(call); ok {
		t.Fatal("the round's answer was taken twice")
	}
	// A round that failed has no answers to give.
	if _, ok := roundAnswers(nil).take(call); ok {
		t.Fatal("a failed round answered")
	}
}
