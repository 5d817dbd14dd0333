package audit

import (
	"context"
	"errors"

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

// AuditMany audits every run the visibility query lists (the Web UI's
// query language, e.g. `WorkflowType = "DraftOrder" AND CloseTime > "2026-01-01T00:00:00Z"`),
// one after the other. One run that cannot be audited does not stop the
// others; the error is for failing to list at all.
func AuditMany(ctx context.Context, d Deps, query string) (ManyReport, error) {
	m := ManyReport{Query: query, Reports: []Report{}}
	if d.Temporal == nil {
		return m, errors.New("audit: listing workflows needs a Temporal client")
	}
	var token []byte
	for {
		page, err := d.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return m, errf("list workflows (%s): %v", query, err)
		}
		for _, info := range page.GetExecutions() {
			if err := ctx.Err(); err != nil {
				return m, err
			}
			id, run := info.GetExecution().GetWorkflowId(), info.GetExecution().GetRunId()
			rep, err := Audit(ctx, d, ByID(id, run))
			if err != nil {
				m.Failed++
				m.Errors = append(m.Errors, RunError{WorkflowID: id, RunID: run, Error: err.Error()})
				continue
			}
			m.Audited++
			if rep.Clean {
				m.Clean++
			} else {
				m.WithFindings++
			}
			m.Reports = append(m.Reports, rep)
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			return m, nil
		}
	}
}
