package client

import (
	"context"
	"errors"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// errf is a client-side error of the closed set.
func errf(code toolkit.Code, format string, args ...any) *toolkit.Error {
	return toolkit.Errorf(code, format, args...)
}

// unreachable explains a failed dial in one line: where we tried and what
// to check, not a gRPC status dump.
func (c *Client) unreachable(err error) *toolkit.Error {
	why := short(err)
	// "failed reaching server: connection error: desc = \"transport: Error
	// while dialing: dial tcp …: connect: connection refused\"": the last
	// part is the news.
	if strings.Contains(why, "while dialing") {
		why = strings.TrimRight(why, `"`)
		why = why[strings.LastIndex(why, ": ")+2:]
	}
	// The program's own token first: a provider certificate the program
	// does not trust is not Temporal's TLS.
	if tw, ok := tokenWhy(why); ok {
		return errf(toolkit.UpstreamError, "cannot reach Temporal at %s (namespace %s): %s", c.hostPort, c.namespace, tw).WithCause(err)
	}
	if tw, ok := tlsWhy(why); ok {
		return errf(toolkit.UpstreamError, "cannot reach Temporal at %s (namespace %s): %s", c.hostPort, c.namespace, tw).WithCause(err)
	}
	return errf(toolkit.UpstreamError, "cannot reach Temporal at %s (namespace %s): %s; is the server running? (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE)",
		c.hostPort, c.namespace, why).WithCause(err)
}

// namespaceNotFound tells a namespace that does not exist (NOT_FOUND) from
// a server that cannot read its namespaces: Temporal's frontend answers
// NamespaceNotFound also when its database is unreachable (its namespace
// registry turns any read error into not-found), which a patient caller
// must retry like any outage (docs/operators.md#a-temporal-cluster-make-cluster).
// DescribeNamespace reads the namespace from the database itself and
// answers Unavailable then.
func (c *Client) namespaceNotFound(err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, derr := c.tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: c.namespace})
	var nsNotFound *serviceerror.NamespaceNotFound
	if derr == nil || !errors.As(derr, &nsNotFound) {
		return errf(toolkit.UpstreamError, "namespace %s on %s: the server cannot read its namespaces now (%s); retry",
			c.namespace, c.hostPort, short(cmpErr(derr, err))).WithCause(err)
	}
	return errf(toolkit.NotFound, "namespace %s not found on %s", c.namespace, c.hostPort).WithCause(err)
}

// cmpErr is the first non-nil error.
func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// wrap maps an SDK or server error about workflow id into the closed set.
// what names the operation for the message ("query", "signal confirm" …).
func (c *Client) wrap(err error, id, what string) error {
	if err == nil {
		return nil
	}
	var te *toolkit.Error
	if errors.As(err, &te) {
		return te
	}
	var (
		notFound   *serviceerror.NotFound
		nsNotFound *serviceerror.NamespaceNotFound
		started    *serviceerror.WorkflowExecutionAlreadyStarted
		invalid    *serviceerror.InvalidArgument
		denied     *serviceerror.PermissionDenied
		exhausted  *serviceerror.ResourceExhausted
		unavail    *serviceerror.Unavailable
		queryFail  *serviceerror.QueryFailed
		deadline   *serviceerror.DeadlineExceeded
		canceled   *temporal.CanceledError
		terminated *temporal.TerminatedError
		timeout    *temporal.TimeoutError
		appErr     *temporal.ApplicationError
	)
	switch {
	case errors.As(err, &notFound):
		return errf(toolkit.NotFound, "workflow %s not found in namespace %s", id, c.namespace).WithCause(err)
	case errors.As(err, &nsNotFound):
		return c.namespaceNotFound(err)
	case errors.As(err, &started):
		return errf(toolkit.Conflict, "workflow %s already exists", id).WithCause(err)
	case errors.As(err, &queryFail):
		// A worker that lacks a payload key cannot run the workflow's code
		// to answer; its error names the key (codec.MissingKeyIn).
		if keyID, ok := codec.MissingKeyIn(queryFail.Error()); ok {
			return workerLacksKey(what, id, keyID, err)
		}
		return errf(toolkit.UpstreamError, "%s %s: the workflow could not answer: %s", what, id, short(err)).WithCause(err)
	case errors.As(err, &invalid):
		return errf(toolkit.InvalidArgument, "%s %s: %s", what, id, short(err)).WithCause(err)
	case errors.As(err, &denied):
		return errf(toolkit.Forbidden, "%s %s: permission denied: %s", what, id, short(err)).WithCause(err)
	case status.Code(err) == codes.Unauthenticated:
		return errf(toolkit.Unauthorized, "%s %s: not authenticated (TEMPORAL_API_KEY, TLS): %s", what, id, short(err)).WithCause(err)
	case errors.As(err, &exhausted):
		return errf(toolkit.RateLimited, "%s %s: server busy: %s", what, id, short(err)).WithCause(err)
	case errors.As(err, &unavail):
		return c.unreachable(err)
	case errors.As(err, &deadline), errors.Is(err, context.DeadlineExceeded):
		// A query waits for a worker, a start or an update for history and
		// matching too: say which of them did not answer.
		return errf(toolkit.Timeout, "%s %s: no answer in time: %s", what, id, c.noAnswerWhy(id)).WithCause(err)
	case errors.Is(err, context.Canceled):
		return errf(toolkit.Timeout, "%s %s: cancelled", what, id).WithCause(err)
	case errors.As(err, &canceled):
		// A run that refused its input at its start ends canceled with
		// the check's error (docs/backend.md#other-languages).
		var te toolkit.Error
		if canceled.HasDetails() && canceled.Details(&te) == nil && te.Code.Valid() {
			return &te
		}
		return errf(toolkit.Conflict, "workflow %s was cancelled", id).WithCause(err)
	case errors.As(err, &terminated):
		return errf(toolkit.Conflict, "workflow %s was terminated", id).WithCause(err)
	case errors.As(err, &timeout):
		return errf(toolkit.Timeout, "workflow %s timed out (%s)", id, timeout.TimeoutType()).WithCause(err)
	case errors.As(err, &appErr):
		// The workflow failed with a closed-set code as its error type
		// (e.g. INVALID_ARGUMENT for an input it refused).
		return toolkit.AsError(err)
	}
	return errf(toolkit.UpstreamError, "%s %s: %s", what, id, short(err)).WithCause(err)
}

// closedOrMissing tells apart a signal to a workflow that never existed
// (NOT_FOUND) and one to a workflow that already ended (CONFLICT): the
// server answers both with NotFound.
func (c *Client) closedOrMissing(ctx context.Context, err error, id, what string) error {
	var notFound *serviceerror.NotFound
	if !errors.As(err, &notFound) {
		return c.wrap(err, id, what)
	}
	d, derr := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if derr != nil {
		return c.wrap(err, id, what)
	}
	st := d.GetWorkflowExecutionInfo().GetStatus()
	if st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return c.wrap(err, id, what)
	}
	return errf(toolkit.Conflict, "%s %s: the workflow already ended (%s)", what, id, statusName(st)).WithCause(err)
}

// statusName is "Completed" for WORKFLOW_EXECUTION_STATUS_COMPLETED.
func statusName(s enumspb.WorkflowExecutionStatus) string {
	n := strings.TrimPrefix(s.String(), "WorkflowExecutionStatus")
	return strings.TrimPrefix(n, "WORKFLOW_EXECUTION_STATUS_")
}

// short is the first line of an error, without the gRPC prefixes that
// repeat what the code already says.
func short(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	for _, p := range []string{"rpc error: ", "code = "} {
		s = strings.TrimPrefix(s, p)
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return toolkit.SanitizeText(s)
}
