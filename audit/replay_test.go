package audit_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/worker/wiring"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/registry"
)

// historiesDir holds histories of real runs of the supported build
// (TestCaptureHistories, docs/versioning.md), one per workflow path.
// Replaying them on every `go test` (no services needed, so also under
// -short) makes a change that would break the runs pinned to this build
// fail CI: such a change ships as a new build id.
const historiesDir = "testdata/histories"

// mustCover are the paths that must have a captured history: deleting one
// must not make CI pass by testing less. Add a path here when capturing it.
var mustCover = []string{
	"draftorder_happy", "draftorder_requote", "draftorder_approval", "draftorder_rejection",
	"draftorder_blocked", "draftorder_refused_approval", "draftorder_ground",
	// The write's hand-over from its in-process attempt to the activity, and
	// the quote step's local activity retried after a failed attempt.
	"draftorder_handover", "draftorder_quote_retried",
	// Driven by Workflow Updates (Update-with-Start, confirm and decide).
	"updates_draftorder_happy", "updates_draftorder_approval",
	"onboarding", "toolcall", "reconcile", "archive", "fxrates",
	// The currency check against the rates in use: the client's ask, and
	// a start it refuses in the run's first step.
	"fxrates_in_use", "draftorder_currency_refused",
	// A written draft order's run (docs/stock.md), and a refund
	// its first step refuses (docs/payments.md#refunds).
	"settle_cancel", "refund_refused",
}

func TestReplayHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		have[strings.TrimSuffix(filepath.Base(f), ".json")] = true
	}
	for _, name := range mustCover {
		if !have[name] {
			t.Errorf("no captured history %s/%s.json (see TestCaptureHistories)", historiesDir, name)
		}
	}
	sort.Strings(files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h, err := audit.ReadHistoryFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := history.Summarize(h)
			if err != nil {
				t.Fatal(err)
			}
			r := worker.NewWorkflowReplayer()
			registry.Register(r, wiring.ToolSpecs())
			err = r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: sum.WorkflowID, RunID: sum.RunID},
			})
			if err != nil {
				t.Fatalf("%s (%s, %d events) no longer replays: %v", sum.WorkflowID, sum.WorkflowType, sum.Events, err)
			}
		})
	}
}

// TestReplayDetectsChange keeps TestReplayHistories honest: the happy path's
// history must not replay against different code registered under its name.
func TestReplayDetectsChange(t *testing.T) {
	h, err := audit.ReadHistoryFile(filepath.Join(historiesDir, "draftorder_happy.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(func(ctx workflow.Context, in draftorder.Input) (draftorder.Result, error) {
		return draftorder.Result{State: draftorder.StateCancelled}, nil // schedules nothing
	}, workflow.RegisterOptions{Name: draftorder.WorkflowName})
	if err := r.ReplayWorkflowHistory(nil, h); err == nil {
		t.Fatal("a history replayed against code that schedules none of its activities")
	} else {
		t.Logf("replay of changed code fails as it must: %v", err)
	}
}
