package flowtest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// T0 is the test clock's start, so quote expiries are exact.
var T0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// FakeEnv is what the DraftOrder and Onboarding fixtures share: the test
// workflow environment, started at t0 with the run's workflow id and the
// search-attribute upserts recorded, and the bookkeeping of the fake
// activities (the calls each received, the failures the test set).
type FakeEnv struct {
	T   *testing.T
	Env *testsuite.TestWorkflowEnvironment
	// snapPrefix starts the fake snapshot ids.
	snapPrefix string

	Mu sync.Mutex
	// Failures per activity name, returned instead of an answer.
	Failures map[string]*toolkit.Error
	// failTimes limits a failure to the next n calls (0: always).
	failTimes map[string]int
	Calls     map[string][]any
	// ToolCalls are the tools called, through the tool activity or inside
	// a quote or price step.
	ToolCalls []string
	// Steps counts the quote and price steps (activities.Tools.Quote,
	// Price) run.
	Steps int
	// answers are the fake tools' answers by snapshot id: what a fake
	// checkout.compute_total reads (Answer).
	answers map[string]json.RawMessage
	snapN   int
	Upserts []string
}

// Init builds the environment for a run of workflowID whose fake snapshot
// ids start with snapPrefix. The fixture registers its workflow and
// activities next, then mocks them and calls recordUpserts (the test
// environment wants every registration before any mock).
func (f *FakeEnv) Init(t *testing.T, workflowID, snapPrefix string) {
	var suite testsuite.WorkflowTestSuite
	f.T, f.Env, f.snapPrefix = t, suite.NewTestWorkflowEnvironment(), snapPrefix
	f.Failures, f.failTimes, f.Calls = map[string]*toolkit.Error{}, map[string]int{}, map[string][]any{}
	f.answers = map[string]json.RawMessage{}
	f.Env.SetStartTime(T0)
	f.Env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflowID})
}

// recordUpserts records the search-attribute upserts in f.upserts.
func (f *FakeEnv) recordUpserts() {
	f.Env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		f.Mu.Lock()
		defer f.Mu.Unlock()
		if v, ok := sa.GetKeyword(workflows.SearchState); ok {
			f.Upserts = append(f.Upserts, "state="+v)
		}
		if v, ok := sa.GetBool(workflows.SearchAwaitingApproval); ok {
			f.Upserts = append(f.Upserts, fmt.Sprintf("awaiting=%v", v))
		}
	}).Return(nil)
}

// EnvelopeFor fakes the invoker's envelope with a fresh snapshot id.
func (f *FakeEnv) EnvelopeFor(tool string, status toolkit.Status) toolkit.Response {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.snapN++
	return toolkit.Response{OK: true, Status: status, Tool: tool, Version: "1.0.0",
		Evidence: &toolkit.Evidence{SnapshotID: fmt.Sprintf("%s%02d", f.snapPrefix, f.snapN), Sources: []toolkit.Source{{Type: "tool", Name: tool, Hash: "sha256:test"}}}}
}

// Answer decodes the data of the fake answer whose snapshot is id into
// out; false when no fake answered with it.
func (f *FakeEnv) Answer(id string, out any) bool {
	f.Mu.Lock()
	raw, ok := f.answers[id]
	f.Mu.Unlock()
	return ok && json.Unmarshal(raw, out) == nil
}

// Fail makes activity fail with e, for the next times calls (0: always).
func (f *FakeEnv) Fail(activity string, e *toolkit.Error, times int) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Failures[activity], f.failTimes[activity] = e, times
}

// Enter records a call and returns the failure configured for it.
func (f *FakeEnv) Enter(name string, in any) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Calls[name] = append(f.Calls[name], in)
	if e := f.Failures[name]; e != nil {
		if n := f.failTimes[name]; n > 0 {
			if n == 1 {
				delete(f.Failures, name)
			}
			f.failTimes[name] = n - 1
		}
		return activities.ApplicationError(e)
	}
	return nil
}

func (f *FakeEnv) Count(name string) int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return len(f.Calls[name])
}

func (f *FakeEnv) CallsOf(name string) []any {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]any(nil), f.Calls[name]...)
}

// At runs fn at d after the start of the workflow.
func (f *FakeEnv) At(d time.Duration, fn func()) { f.Env.RegisterDelayedCallback(fn, d) }

// staff mirrors migration 00005_staff.sql.
var staff = fakeRoster{
	"alice.support": {ID: "alice.support", Role: "support", Active: true}, "bob.compliance": {ID: "bob.compliance", Role: "compliance", Active: true},
	"carol.admin": {ID: "carol.admin", Role: "admin", Active: true}, "dave.former": {ID: "dave.former", Role: "support", Active: false},
}

type fakeRoster map[string]support.StaffMember

func (r fakeRoster) Lookup(_ context.Context, id string) (support.StaffMember, bool, error) {
	m, ok := r[id]
	return m, ok, nil
}

// recordApproval is support.record_approval's own handler against staff,
// verifying seals with the test ring, as the worker's would.
func (f *FakeEnv) recordApproval(ctx context.Context, in ToolIn[support.RecordApprovalArgs]) (ToolOut[support.ApprovalRecord], error) {
	if err := f.Enter("RecordApproval", in); err != nil {
		return ToolOut[support.ApprovalRecord]{}, err
	}
	args, err := json.Marshal(in.Args)
	if err != nil {
		return ToolOut[support.ApprovalRecord]{}, err
	}
	out, err := support.RecordApprovalHandler(staff, sealtest.Ring())(ctx, &toolkit.Call{Input: args, Spec: support.RecordApprovalSpec})
	if err != nil {
		return ToolOut[support.ApprovalRecord]{}, activities.ApplicationError(toolkit.AsError(err))
	}
	return ToolOut[support.ApprovalRecord]{
		Data:     out.Data.(support.ApprovalRecord),
		Envelope: f.EnvelopeFor(support.RecordApprovalTool, toolkit.StatusOK),
	}, nil
}

// RunWorkflow executes wf (a function or a registered name) with in to its
// end and returns its result.
func RunWorkflow[R any](f *FakeEnv, wf, in any) R {
	f.T.Helper()
	f.Env.ExecuteWorkflow(wf, in)
	if !f.Env.IsWorkflowCompleted() {
		f.T.Fatal("workflow did not complete")
	}
	if err := f.Env.GetWorkflowError(); err != nil {
		f.T.Fatalf("workflow failed: %v", err)
	}
	var res R
	if err := f.Env.GetWorkflowResult(&res); err != nil {
		f.T.Fatal(err)
	}
	return res
}

// FetchStatus queries the running workflow's status.
func FetchStatus[S any](f *FakeEnv) S {
	f.T.Helper()
	v, err := f.Env.QueryWorkflow(workflows.QueryStatus)
	if err != nil {
		f.T.Fatalf("query status: %v", err)
	}
	var s S
	if err := v.Get(&s); err != nil {
		f.T.Fatal(err)
	}
	return s
}
