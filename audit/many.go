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

// manyPage is how many runs one visibility request lists: a few batches,
// so the first runs start soon and the next page is listed while they run.
const manyPage = 4 * manyBatch

// AuditMany audits every run the visibility query lists (the Web UI's
// query language, e.g. `WorkflowType = "DraftOrder" AND CloseTime > "2026-01-01T00:00:00Z"`),
// a few at a time, reporting them in the order listed. Each run is checked
// as Audit checks it; the evidence of manyBatch listed runs at a time is
// read at once. One run that cannot be audited does not stop the others;
// the error is for failing to list (or for Deps Audit would refuse).
//
// The runs flow without a pause (docs/performance.md#audit-rate): the
// listing and each batch's evidence are read one batch ahead of the runs
// being audited, so no core waits for the server or the database.
func AuditMany(ctx context.Context, d Deps, query string) (ManyReport, error) {
	m := ManyReport{Query: query, Reports: []Report{}}
	if d.Temporal == nil {
		return m, errors.New("audit: listing workflows needs a Temporal client")
	}
	d, err := d.withDefaults()
	if err != nil {
		return m, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan *manyRuns) // unbuffered: one batch read ahead
	var listErr error
	go func() {
		defer close(batches)
		listErr = listBatches(ctx, d, query, batches)
	}()
	// manyParallel auditors that live as long as the audit: a run's checks
	// recurse deeply (payload visits, canonical JSON), and a goroutine per
	// run would grow its stack from the smallest again for each.
	todo := make(chan func())
	var wg sync.WaitGroup
	for range manyParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for audit := range todo {
				audit()
			}
		}()
	}
	var runs []*manyRun
	for b := range batches {
		// A replayer keeps each replayed run's result, so each batch has
		// its own (replay.go).
		rs := newReplayers(d)
		for _, r := range b.runs {
			if ctx.Err() != nil {
				break
			}
			runs = append(runs, r)
			todo <- func() {
				r.rep, r.err = auditRun(ctx, d, b.reads, rs, ByID(r.info.GetExecution().GetWorkflowId(), r.info.GetExecution().GetRunId()))
			}
		}
	}
	close(todo)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return m, err
	}
	for _, r := range runs {
		m.add(r)
	}
	return m, listErr
}

// manyRun is one listed run and what auditing it gave.
type manyRun struct {
	info *workflowpb.WorkflowExecutionInfo
	rep  Report
	err  error
}

// manyRuns are manyBatch listed runs and the read of their evidence,
// begun when they were listed.
type manyRuns struct {
	runs  []*manyRun
	reads *batchReads
}

// listBatches lists the query's runs page by page and hands them on
// manyBatch at a time, each batch's evidence read begun before it waits
// to be taken.
func listBatches(ctx context.Context, d Deps, query string, out chan<- *manyRuns) error {
	var pending []*manyRun
	send := func(n int) bool {
		b := &manyRuns{runs: pending[:n:n]}
		pending = pending[n:]
		b.reads = startBatch(ctx, d.Evidence, workflowIDs(b.runs))
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var token []byte
	for {
		page, err := d.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: query, PageSize: manyPage, NextPageToken: token})
		for _, info := range page.GetExecutions() {
			pending = append(pending, &manyRun{info: info})
		}
		token = page.GetNextPageToken()
		last := err != nil || len(token) == 0
		// Every run listed is audited, also when the next page fails.
		for len(pending) >= manyBatch || (last && len(pending) > 0) {
			if !send(min(manyBatch, len(pending))) {
				return ctx.Err()
			}
		}
		if err != nil {
			return errf("list workflows (%s): %v", query, err)
		}
		if last {
			return nil
		}
	}
}

// add files one audited run in m.
func (m *ManyReport) add(r *manyRun) {
	if r.err == nil && r.rep.lacksKey() {
		r.err = errf("%s", r.rep.Findings[0])
	}
	if r.err != nil {
		m.Failed++
		m.Errors = append(m.Errors, RunError{WorkflowID: r.info.GetExecution().GetWorkflowId(),
			RunID: r.info.GetExecution().GetRunId(), Error: r.err.Error()})
		return
	}
	m.Audited++
	if r.rep.Clean {
		m.Clean++
	} else {
		m.WithFindings++
	}
	m.Reports = append(m.Reports, r.rep)
}

// workflowIDs are the runs' workflow ids, each once.
func workflowIDs(runs []*manyRun) []string {
	seen := make(map[string]bool, len(runs))
	ids := make([]string, 0, len(runs))
	for _, r := range runs {
		if id := r.info.GetExecution().GetWorkflowId(); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}
