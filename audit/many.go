package audit

import (
	"context"
	"errors"
	"sync"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// ManyReport is the result of AuditMany.
type ManyReport struct {
	Query   string `json:"query"`
	Audited int    `json:"audited"`
	Clean   int    `json:"clean"`
	// WithFindings counts the runs audited with at least one finding;
	// Failed the runs whose audit could not run (see Errors).
	WithFindings int        `json:"with_findings"`
	Failed       int        `json:"failed"`
	Reports      []Report   `json:"reports"`
	Errors       []RunError `json:"errors,omitempty"`
}

// RunError is one run whose audit could not run.
type RunError struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	Error      string `json:"error"`
}

// ExitCode is 2 if any audit could not run (the answer is incomplete),
// else 1 if any run has findings, else 0.
func (m ManyReport) ExitCode() int {
	switch {
	case m.Failed > 0:
		return ExitCannotRun
	case m.WithFindings > 0:
		return ExitFindings
	}
	return ExitClean
}

// manyParallel is how many runs AuditMany audits at once: each audit
// waits on Temporal for its history and on its batch's evidence, and is
// otherwise the replay, decoding and hashing. On two cores 16 kept both
// busy; 4, 8 and 32 did no better (docs/performance.md#audit-rate).
const manyParallel = 16

// manyBatch is how many listed runs share one read of the evidence store
// (batchReads): a few statements for the lot instead of a dozen per run
// (docs/performance.md#audit-rate).
const manyBatch = 64

// AuditMany audits every run the visibility query lists (the Web UI's
// query language, e.g. `WorkflowType = "DraftOrder" AND CloseTime > "2026-01-01T00:00:00Z"`),
// a few at a time, reporting them in the order listed. Each run is checked
// as Audit checks it; the evidence of manyBatch listed runs at a time is
// read at once. One run that cannot be audited does not stop the others;
// the error is for failing to list at all (or for Deps Audit would refuse).
func AuditMany(ctx context.Context, d Deps, query string) (ManyReport, error) {
	m := ManyReport{Query: query, Reports: []Report{}}
	if d.Temporal == nil {
		return m, errors.New("audit: listing workflows needs a Temporal client")
	}
	d, err := d.withDefaults()
	if err != nil {
		return m, err
	}
	var token []byte
	for {
		page, err := d.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return m, errf("list workflows (%s): %v", query, err)
		}
		if err := auditPage(ctx, d, page.GetExecutions(), &m); err != nil {
			return m, err
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			return m, nil
		}
	}
}

// auditPage audits one page of listed runs, manyParallel at a time, and
// adds them to m in the page's order.
func auditPage(ctx context.Context, d Deps, execs []*workflowpb.WorkflowExecutionInfo, m *ManyReport) error {
	reps := make([]Report, len(execs))
	errs := make([]error, len(execs))
	sem := make(chan struct{}, manyParallel)
	var wg sync.WaitGroup
	var batch *batchReads
	rs := newReplayers(d)
	for i, info := range execs {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return err
		}
		if i%manyBatch == 0 {
			// Read ahead: the next runs' evidence is read while the runs
			// before them are still being audited.
			batch = startBatch(ctx, d.Evidence, workflowIDs(execs[i:min(i+manyBatch, len(execs))]))
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(r reads) {
			defer func() { <-sem; wg.Done() }()
			reps[i], errs[i] = auditRun(ctx, d, r, rs, ByID(info.GetExecution().GetWorkflowId(), info.GetExecution().GetRunId()))
		}(batch)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, info := range execs {
		if errs[i] == nil && reps[i].lacksKey() {
			errs[i] = errf("%s", reps[i].Findings[0])
		}
		if errs[i] != nil {
			m.Failed++
			m.Errors = append(m.Errors, RunError{WorkflowID: info.GetExecution().GetWorkflowId(),
				RunID: info.GetExecution().GetRunId(), Error: errs[i].Error()})
			continue
		}
		m.Audited++
		if reps[i].Clean {
			m.Clean++
		} else {
			m.WithFindings++
		}
		m.Reports = append(m.Reports, reps[i])
	}
	return nil
}

// workflowIDs are the listed runs' workflow ids, each once.
func workflowIDs(execs []*workflowpb.WorkflowExecutionInfo) []string {
	seen := make(map[string]bool, len(execs))
	ids := make([]string, 0, len(execs))
	for _, info := range execs {
		if id := info.GetExecution().GetWorkflowId(); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}
