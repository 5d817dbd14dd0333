package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// EvidenceMargin is added to a tool's own timeout for one activity attempt:
// the invoker bounds the tool by spec.Timeout, then validates, sanitises and
// writes the evidence snapshot, which needs its own time.
const EvidenceMargin = 10 * time.Second

// ToolOptions derives the activity options of one tool call from the tool's
// spec, so the spec stays the single source of timeouts and retries. The
// summary is what the Web UI shows for the activity.
func ToolOptions(ctx workflow.Context, spec toolkit.Spec, summary string) workflow.Context {
	attempt := spec.Timeout + EvidenceMargin
	// retryPolicy lists the non-retryable codes from a map and
	// sorts them: deterministic, though workflowcheck sees a map range.
	//workflowcheck:ignore
	retry := retryPolicy(spec)
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: attempt,
		RetryPolicy:         retry,
		Summary:             summary,
	}
	if n := spec.Retry.MaxAttempts; n > 0 {
		// Every attempt plus the longest backoff between them: the call can
		// never hang the workflow longer than its retry contract allows.
		opts.ScheduleToCloseTimeout = time.Duration(n)*attempt + time.Duration(n-1)*opts.RetryPolicy.MaximumInterval
	}
	return workflow.WithActivityOptions(ctx, opts)
}

// correlationID is the deterministic `corr-{16 hex}`
// (docs/evidence.md#correlation-id) of one step of one run: the same step
// always gets the same id, in a replay and in every retry of the activity, so
// audit rows and evidence line up with the history. Different runs of the same
// workflow id get different ids.
func correlationID(ctx workflow.Context, step string) string {
	info := workflow.GetInfo(ctx)
	return "corr-" + ShortHash(info.WorkflowExecution.ID+"/"+info.WorkflowExecution.RunID+"/"+step)
}

// ShortHash is the first 16 hex digits of SHA-256(s).
func ShortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// Envelope returns base with the correlation id of step, and a request id
// derived from the run when the caller gave none (every call needs one, for
// audit and replay: docs/envelope.md#required-fields).
func Envelope(ctx workflow.Context, base toolkit.Request, step string) toolkit.Request {
	req := base
	req.CorrelationID = correlationID(ctx, step)
	if req.RequestID == "" {
		info := workflow.GetInfo(ctx)
		req.RequestID = "req-" + ShortHash(info.WorkflowExecution.ID+"/"+info.WorkflowExecution.RunID)
	}
	return req
}

// InvalidInput fails the workflow for an input no retry can fix.
func InvalidInput(format string, args ...any) error {
	te := toolkit.Errorf(toolkit.InvalidArgument, format, args...)
	return temporal.NewNonRetryableApplicationError(te.Message, string(te.Code), nil, te)
}

// retryPolicy turns a spec's retry contract into a Temporal policy that
// never retries a non-retryable code.
func retryPolicy(s toolkit.Spec) *temporal.RetryPolicy {
	p := &temporal.RetryPolicy{
		InitialInterval:        s.Retry.InitialInterval,
		BackoffCoefficient:     2,
		MaximumInterval:        s.Retry.MaxInterval,
		MaximumAttempts:        s.Retry.MaxAttempts,
		NonRetryableErrorTypes: toolkit.NonRetryableCodes(),
	}
	for _, c := range s.Retry.FinalCodes {
		p.NonRetryableErrorTypes = append(p.NonRetryableErrorTypes, string(c))
	}
	if p.InitialInterval == 0 {
		p.InitialInterval = 200 * time.Millisecond
	}
	if p.MaximumInterval == 0 {
		p.MaximumInterval = 10 * time.Second
	}
	return p
}
