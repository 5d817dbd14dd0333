package history

import (
	"context"
	"fmt"
	"strings"
	"time"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/evidence/archive"
)

// DefaultOverlap is how far before the watermark a sweep looks again. It
// covers runs that reached the visibility store after the previous sweep
// had listed their close time's window (visibility is eventually
// consistent); they are found again and archived, the others skipped.
const DefaultOverlap = 15 * time.Minute

// SweepOptions configure one archiving pass.
type SweepOptions struct {
	// TaskQueue limits the pass to runs of one task queue and is the
	// watermark's scope; "" archives every closed run of the namespace.
	TaskQueue string
	// ExcludeTypes are workflow types never archived (the archiver itself).
	ExcludeTypes []string
	// Overlap defaults to DefaultOverlap.
	Overlap time.Duration
	// Until is the close-time bound of the pass; zero means now.
	Until time.Time
	// Progress, if set, is called after every run (the activity heartbeats).
	Progress func(SweepResult)
}

// SweepResult says what one pass did.
type SweepResult struct {
	Scope string    `json:"scope"`
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Listed runs closed in [Since, Until); each is Archived now, was
	// AlreadyArchived, or Gone (the server deleted it before we came).
	Listed          int `json:"listed"`
	Archived        int `json:"archived"`
	AlreadyArchived int `json:"already_archived"`
	Gone            int `json:"gone"`
}

// Sweep archives every run closed since the scope's watermark (minus the
// overlap) and before Until, then advances the watermark to Until. It is
// idempotent: a failed pass returns the error without moving the watermark,
// and the next pass redoes it, skipping what is already archived.
func Sweep(ctx context.Context, c client.Client, s *archive.Store, opts SweepOptions) (SweepResult, error) {
	scope := opts.TaskQueue
	if scope == "" {
		scope = "*"
	}
	res := SweepResult{Scope: scope, Until: opts.Until.UTC()}
	if res.Until.IsZero() {
		res.Until = time.Now().UTC()
	}
	if opts.Overlap <= 0 {
		opts.Overlap = DefaultOverlap
	}
	mark, err := s.Watermark(ctx, scope)
	if err != nil {
		return res, err
	}
	if !mark.IsZero() {
		res.Since = mark.Add(-opts.Overlap)
	}
	query, err := closedQuery(opts, res.Since, res.Until)
	if err != nil {
		return res, err
	}
	var token []byte
	for {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return res, fmt.Errorf("list closed workflows (%s): %w", query, err)
		}
		for _, info := range page.GetExecutions() {
			if err := archiveOne(ctx, c, s, info, &res); err != nil {
				return res, err
			}
			if opts.Progress != nil {
				opts.Progress(res)
			}
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return res, s.AdvanceWatermark(ctx, scope, res.Until)
}

func archiveOne(ctx context.Context, c client.Client, s *archive.Store, info *workflowpb.WorkflowExecutionInfo, res *SweepResult) error {
	res.Listed++
	id, run := info.GetExecution().GetWorkflowId(), info.GetExecution().GetRunId()
	if ok, err := s.Has(ctx, id, run); err != nil {
		return err
	} else if ok {
		res.AlreadyArchived++
		return nil
	}
	h, err := FetchHistory(ctx, c, id, run)
	if IsNotFound(err) {
		res.Gone++
		return nil
	}
	if err != nil {
		return err
	}
	rec, err := NewRecord(id, run, h)
	if err != nil {
		return err
	}
	inserted, err := s.Put(ctx, rec)
	if err != nil {
		return err
	}
	if inserted {
		res.Archived++
	} else {
		res.AlreadyArchived++ // a concurrent pass got there first
	}
	return nil
}

// closedQuery is the visibility query of one pass.
func closedQuery(opts SweepOptions, since, until time.Time) (string, error) {
	parts := []string{`ExecutionStatus != "Running"`}
	if !since.IsZero() {
		parts = append(parts, fmt.Sprintf(`CloseTime >= "%s"`, since.UTC().Format(time.RFC3339Nano)))
	}
	parts = append(parts, fmt.Sprintf(`CloseTime < "%s"`, until.UTC().Format(time.RFC3339Nano)))
	if opts.TaskQueue != "" {
		q, err := literal(opts.TaskQueue)
		if err != nil {
			return "", err
		}
		parts = append(parts, "TaskQueue = "+q)
	}
	for _, t := range opts.ExcludeTypes {
		q, err := literal(t)
		if err != nil {
			return "", err
		}
		parts = append(parts, "WorkflowType != "+q)
	}
	return strings.Join(parts, " AND "), nil
}

// literal quotes a value for a visibility query; names with quotes or
// backslashes are refused rather than escaped, since no name of ours has any.
func literal(v string) (string, error) {
	if strings.ContainsAny(v, "\"'\\\n") {
		return "", fmt.Errorf("archive: %q cannot be used in a visibility query", v)
	}
	return `"` + v + `"`, nil
}
