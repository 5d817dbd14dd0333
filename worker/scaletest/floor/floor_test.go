package floor

import (
	"context"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// TestVariantsRunTheDraftOrdersShape runs both variants in the SDK's test
// environment: all six steps run, the first three before any of the last
// three, and the last three in order, each after the one before; Floor6
// schedules regular activities, Floor6Local local ones.
func TestVariantsRunTheDraftOrdersShape(t *testing.T) {
	for _, variant := range []string{Floor6, Floor6Local} {
		t.Run(variant, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var mu sync.Mutex
			var ran []string
			local := map[string]bool{}
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, info.ActivityType.Name)
			})
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
				mu.Lock()
				defer mu.Unlock()
				ran = append(ran, info.ActivityType.Name)
				local[info.ActivityType.Name] = true
			})
			Register(env)
			env.ExecuteWorkflow(variant, NewOrder("o-1"))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var res Result
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if res.Step != LastStep || res.After != "total" || res.OrderID != "o-1" || res.AmountCents != 2*1999+4950 {
				t.Fatalf("result %+v: want the last step of o-1, after total, with the subtotal", res)
			}
			if len(ran) != 6 {
				t.Fatalf("ran %v, want six steps", ran)
			}
			parallel := map[string]bool{}
			for _, s := range ran[:3] {
				parallel[s] = true
			}
			if !parallel["pricing"] || !parallel["shipping"] || !parallel["compliance"] {
				t.Errorf("first three steps %v, want pricing, shipping, compliance in any order", ran[:3])
			}
			if ran[3] != "duties" || ran[4] != "total" || ran[5] != LastStep {
				t.Errorf("last three steps %v, want duties, total, %s", ran[3:], LastStep)
			}
			wantLocal := 0
			if variant == Floor6Local {
				wantLocal = 6
			}
			if len(local) != wantLocal {
				t.Errorf("%s ran %d of 6 steps as local activities, want %d", variant, len(local), wantLocal)
			}
		})
	}
}

// TestConfirmVariantWaitsForTheTotalItShowed runs Floor6LocalConfirm in the
// SDK's test environment: the quote update answers with the total, a
// confirm naming another total is refused, and the confirm naming the
// shown total answers with the write's result, which the run returns.
func TestConfirmVariantWaitsForTheTotalItShowed(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env)
	var c confirmRound
	c.drive(t, env, "total/other")
	env.ExecuteWorkflow(Floor6LocalConfirm, NewOrder("o-2"))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if c.total.Step != "total" || c.total.OrderID != "o-2" {
		t.Fatalf("quote answered %+v, want the total of o-2", c.total)
	}
	if c.refused == nil {
		t.Error("a confirm naming another total was accepted")
	}
	if res.Step != LastStep || res.After != "total" || c.confirmed != res {
		t.Fatalf("run %+v, confirm %+v: want the write after the total, the same in both", res, c.confirmed)
	}
}

// TestExtrasVariantIsTheConfirmVariantWithExtras runs
// Floor6LocalConfirmExtras with every extra in the SDK's test environment:
// the same protocol and steps as Floor6LocalConfirm, the answers padded
// as asked, the state upserted before the end.
func TestExtrasVariantIsTheConfirmVariantWithExtras(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env)
	if err := env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(stateKey.ValueSet("NEEDS_USER_CONFIRMATION"))); err != nil {
		t.Fatal(err)
	}
	var c confirmRound
	c.drive(t, env, "")
	x := Extras{Timer: true, MarkerPad: 1000, AnswerPad: 500, Upsert: true, Summaries: true}
	env.ExecuteWorkflow(Floor6LocalConfirmExtras, ExtrasInput{Order: NewOrder("o-3"), Extras: x})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if c.total.Step != "total" || len(c.total.Padding) != 500 || res.Step != LastStep || res.After != "total" ||
		len(res.Padding) != 500 || c.confirmed.Ref != res.Ref {
		t.Fatalf("quote %+v, run %+v, confirm %+v", c.total, res, c.confirmed)
	}
}

// confirmRound drives a run of the confirm protocol in the SDK's test
// environment as the bench's client does, and keeps what it was answered.
type confirmRound struct {
	total, confirmed Result
	// refused is the rejection of the confirm naming a forged total.
	refused error
}

// drive sends the quote update at the start, then, once it answered, a
// confirm naming forged (unless "") and the confirm naming the total.
func (c *confirmRound) drive(t *testing.T, env *testsuite.TestWorkflowEnvironment, forged string) {
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateQuote, "quote-1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("quote rejected: %v", err) },
			OnComplete: func(v any, err error) {
				if err != nil {
					t.Errorf("quote: %v", err)
					return
				}
				c.total = v.(Result)
				if forged != "" {
					env.UpdateWorkflow(UpdateConfirm, "confirm-forged", &testsuite.TestUpdateCallback{
						OnReject: func(err error) { c.refused = err }, OnComplete: func(any, error) {}}, forged)
				}
				env.UpdateWorkflow(UpdateConfirm, "confirm-1", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { t.Errorf("confirm rejected: %v", err) },
					OnComplete: func(v any, err error) {
						if err != nil {
							t.Errorf("confirm: %v", err)
							return
						}
						c.confirmed = v.(Result)
					}}, c.total.Ref)
			}})
	}, 0)
}
