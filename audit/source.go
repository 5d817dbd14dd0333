package audit

import (
	"context"
	"errors"
	"fmt"
	"os"

	historypb "go.temporal.io/api/history/v1"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/evidence/archive"
)

// ErrNotFound means neither the server nor the archive has the run.
var ErrNotFound = errors.New("audit: workflow run not found")

// ReadHistoryFile reads a history exported with
// `temporal workflow show --workflow-id ID --output json > FILE`.
func ReadHistoryFile(path string) (*historypb.History, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit: read history file: %w", err)
	}
	h, err := history.DecodeHistory(b)
	if err != nil {
		return nil, fmt.Errorf("audit: %s: %w", path, err)
	}
	return h, nil
}

// load finds the history of t and fills the report's identity.
func load(ctx context.Context, d Deps, t Target, rep *Report) (*historypb.History, error) {
	h, runID, err := fetch(ctx, d, t, rep)
	if err != nil || h == nil {
		return nil, err
	}
	sum, err := history.Summarize(h)
	if err != nil {
		return nil, errf("%v", err)
	}
	rep.WorkflowID, rep.RunID = first(t.WorkflowID, sum.WorkflowID), first(runID, t.RunID, sum.RunID)
	rep.WorkflowType, rep.Status, rep.Events = sum.WorkflowType, sum.Status, sum.Events
	return h, nil
}

// fetch returns the history and, when the source knows it, the exact run id.
func fetch(ctx context.Context, d Deps, t Target, rep *Report) (*historypb.History, string, error) {
	if t.History != nil {
		rep.Source = SourceGiven
		return t.History, "", nil
	}
	if t.WorkflowID == "" {
		return nil, "", errf("a workflow id or a history is required")
	}
	if d.Temporal != nil {
		runID := t.RunID
		if runID == "" {
			// Pin the current run first, so the history and the run id
			// in the report are the same run even if a new one starts.
			desc, err := d.Temporal.DescribeWorkflowExecution(ctx, t.WorkflowID, "")
			if err == nil {
				runID = desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
			} else if !history.IsNotFound(err) {
				return nil, "", errf("describe %s: %v", t.WorkflowID, err)
			}
		}
		if runID != "" || t.RunID != "" {
			h, err := history.FetchHistory(ctx, d.Temporal, t.WorkflowID, runID)
			if err == nil {
				rep.Source = SourceServer
				return h, runID, nil
			}
			if !history.IsNotFound(err) {
				return nil, "", errf("%v", err)
			}
		}
	}
	return fromArchive(ctx, d, t, rep)
}

func fromArchive(ctx context.Context, d Deps, t Target, rep *Report) (*historypb.History, string, error) {
	if d.Archive == nil {
		return nil, "", fmt.Errorf("%w: %s %s (no history archive configured)", ErrNotFound, t.WorkflowID, t.RunID)
	}
	rec, err := d.Archive.Get(ctx, t.WorkflowID, t.RunID, d.Reader, "audit of "+t.WorkflowID)
	if errors.Is(err, archive.ErrNotArchived) {
		return nil, "", fmt.Errorf("%w: %s %s is neither on the server nor in the archive", ErrNotFound, t.WorkflowID, t.RunID)
	}
	if errors.Is(err, archive.ErrAltered) && rec != nil {
		// Nothing of an altered history can be trusted, so nothing else is
		// checked: the audit ends with this finding.
		rep.Source, rep.WorkflowID, rep.RunID, rep.WorkflowType, rep.Status = SourceArchive, rec.WorkflowID, rec.RunID, rec.WorkflowType, rec.CloseStatus
		rep.find(Finding{Kind: KindArchiveAltered, Detail: err.Error()})
		return nil, rec.RunID, nil
	}
	if err != nil {
		return nil, "", errf("%v", err)
	}
	rep.Source = SourceArchive
	h, err := history.RecordHistory(rec)
	if err != nil {
		return nil, "", errf("archived history of %s: %v", t.WorkflowID, err)
	}
	return h, rec.RunID, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
