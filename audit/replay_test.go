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
	"github.com/cartwright-dev/cartwright/workflows"
)

// historiesDir holds histories of real runs (TestCaptureHistories), one per
// workflow path. Replaying them on every `go test` (no services needed, so
// also under -short) makes a change that would break running workflows
// fail CI.
const historiesDir = "testdata/histories"

// mustCover are the paths that must have a captured history: deleting one
// must not make CI pass by testing less. Add a path here when capturing it.
var mustCover = []string{
	// Recorded before the tool activity: the per-tool activities.
	"draftorder_happy", "draftorder_requote", "draftorder_approval", "draftorder_rejection", "onboarding",
	// Recorded on Tools.CallTool, compliance for the chosen mode.
	"calltool_draftorder_happy", "calltool_draftorder_requote", "calltool_draftorder_approval",
	"calltool_draftorder_rejection", "calltool_draftorder_blocked", "calltool_draftorder_ground", "calltool_onboarding",
	// The read-only tools as local activities (markers instead of activity events).
	"local_draftorder_happy", "local_draftorder_requote", "local_draftorder_approval",
	"local_draftorder_rejection", "local_draftorder_blocked", "local_draftorder_ground",
	// One approval-window timer per request (approval-one-window-timer).
	"calltool_draftorder_refused_approval",
	// Driven by Workflow Updates (Update-with-Start, confirm and decide).
	"updates_draftorder_happy", "updates_draftorder_approval",
	// The same, on the local activities.
	"local_updates_draftorder_happy", "local_updates_draftorder_approval",
	"local_draftorder_refused_approval",
	// Generation 1 (workflows/generation.go): no version markers, the write
	// in the worker, and its hand-over to the regular activity.
	"gen1_draftorder_happy", "gen1_draftorder_requote", "gen1_draftorder_approval", "gen1_draftorder_blocked",
	"gen1_updates_draftorder_happy", "gen1_draftorder_handover",
	// Generation 2: the first quote round in one local activity, and the
	// workflow making the round's calls when the round fails.
	"gen2_draftorder_happy", "gen2_draftorder_requote", "gen2_draftorder_approval", "gen2_draftorder_blocked",
	"gen2_updates_draftorder_happy", "gen2_draftorder_round_fails",
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
			workflows.Register(r, wiring.ToolSpecs())
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
	r.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.DraftOrderInput) (workflows.DraftOrderResult, error) {
		return workflows.DraftOrderResult{State: workflows.StateCancelled}, nil // schedules nothing
	}, workflow.RegisterOptions{Name: workflows.DraftOrderWorkflowName})
	if err := r.ReplayWorkflowHistory(nil, h); err == nil {
		t.Fatal("a history replayed against code that schedules none of its activities")
	} else {
		t.Logf("replay of changed code fails as it must: %v", err)
	}
}
