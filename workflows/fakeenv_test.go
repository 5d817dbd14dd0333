package workflows

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
)

// t0 is the test clock's start, so quote expiries are exact.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// fakeEnv is what the DraftOrder and Onboarding fixtures share: the test
// workflow environment, started at t0 with the run's workflow id and the
// search-attribute upserts recorded, and the bookkeeping of the fake
// activities (the calls each received, the failures the test set).
type fakeEnv struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment
	// snapPrefix starts the fake snapshot ids.
	snapPrefix string

	mu sync.Mutex
	// failures per activity name, returned instead of an answer.
	failures map[string]*toolkit.Error
	// failTimes limits a failure to the next n calls (0: always).
	failTimes map[string]int
	calls     map[string][]any
	// toolCalls are the tools called through the tool activity (CallTool).
	toolCalls []string
	// rounds counts quote rounds (activities.QuoteRound) run.
	rounds int
	// direct are the tools the workflow called through the tool activity
	// itself (not inside a quote round).
	direct []string
	// tamperRound, if set, changes a quote round's result before the
	// workflow sees it.
	tamperRound func(*activities.QuoteRoundResult)
	snapN       int
	upserts     []string
}

// init builds the environment for a run of workflowID whose fake snapshot
// ids start with snapPrefix. The fixture registers its workflow and
// activities next, then mocks them and calls recordUpserts (the test
// environment wants every registration before any mock).
func (f *fakeEnv) init(t *testing.T, workflowID, snapPrefix string) {
	var suite testsuite.WorkflowTestSuite
	f.t, f.env, f.snapPrefix = t, suite.NewTestWorkflowEnvironment(), snapPrefix
	f.failures, f.failTimes, f.calls = map[string]*toolkit.Error{}, map[string]int{}, map[string][]any{}
	f.env.SetStartTime(t0)
	f.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflowID})
}

// recordUpserts records the search-attribute upserts in f.upserts.
func (f *fakeEnv) recordUpserts() {
	f.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		f.mu.Lock()
		defer f.mu.Unlock()
		if v, ok := sa.GetKeyword(SearchState); ok {
			f.upserts = append(f.upserts, "state="+v)
		}
		if v, ok := sa.GetBool(SearchAwaitingApproval); ok {
			f.upserts = append(f.upserts, fmt.Sprintf("awaiting=%v", v))
		}
	}).Return(nil)
}

// envelopeFor fakes the invoker's envelope with a fresh snapshot id.
func (f *fakeEnv) envelopeFor(tool string, status toolkit.Status) toolkit.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapN++
	return toolkit.Response{OK: true, Status: status, Tool: tool, Version: "1.0.0",
		Evidence: &toolkit.Evidence{SnapshotID: fmt.Sprintf("%s%02d", f.snapPrefix, f.snapN), Sources: []toolkit.Source{{Type: "tool", Name: tool, Hash: "sha256:test"}}}}
}

// fail makes activity fail with e, for the next times calls (0: always).
func (f *fakeEnv) fail(activity string, e *toolkit.Error, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[activity], f.failTimes[activity] = e, times
}

// enter records a call and returns the failure configured for it.
func (f *fakeEnv) enter(name string, in any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[name] = append(f.calls[name], in)
	if e := f.failures[name]; e != nil {
		if n := f.failTimes[name]; n > 0 {
			if n == 1 {
				delete(f.failures, name)
			}
			f.failTimes[name] = n - 1
		}
		return activities.ApplicationError(e)
	}
	return nil
}

func (f *fakeEnv) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls[name])
}

func (f *fakeEnv) callsOf(name string) []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]any(nil), f.calls[name]...)
}

// at runs fn at d after the start of the workflow.
func (f *fakeEnv) at(d time.Duration, fn func()) { f.env.RegisterDelayedCallback(fn, d) }

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
func (f *fakeEnv) recordApproval(ctx context.Context, in toolIn[support.RecordApprovalArgs]) (toolOut[support.ApprovalRecord], error) {
	if err := f.enter("RecordApproval", in); err != nil {
		return toolOut[support.ApprovalRecord]{}, err
	}
	args, err := json.Marshal(in.Args)
	if err != nil {
		return toolOut[support.ApprovalRecord]{}, err
	}
	out, err := support.RecordApprovalHandler(staff, sealtest.Ring())(ctx, &toolkit.Call{Input: args, Spec: support.RecordApprovalSpec})
	if err != nil {
		return toolOut[support.ApprovalRecord]{}, activities.ApplicationError(toolkit.AsError(err))
	}
	return toolOut[support.ApprovalRecord]{
		Data:     out.Data.(support.ApprovalRecord),
		Envelope: f.envelopeFor(support.RecordApprovalTool, toolkit.StatusOK),
	}, nil
}

// runWorkflow executes wf (a function or a registered name) with in to its
// end and returns its result.
func runWorkflow[R any](f *fakeEnv, wf, in any) R {
	f.t.Helper()
	f.env.ExecuteWorkflow(wf, in)
	if !f.env.IsWorkflowCompleted() {
		f.t.Fatal("workflow did not complete")
	}
	if err := f.env.GetWorkflowError(); err != nil {
		f.t.Fatalf("workflow failed: %v", err)
	}
	var res R
	if err := f.env.GetWorkflowResult(&res); err != nil {
		f.t.Fatal(err)
	}
	return res
}

// queryStatus queries the running workflow's status.
func queryStatus[S any](f *fakeEnv) S {
	f.t.Helper()
	v, err := f.env.QueryWorkflow(QueryStatus)
	if err != nil {
		f.t.Fatalf("query status: %v", err)
	}
	var s S
	if err := v.Get(&s); err != nil {
		f.t.Fatal(err)
	}
	return s
}
