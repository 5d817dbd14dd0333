package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// A call that got no answer in time says what is down instead of guessing
// a missing worker (docs/backend.md#outages): the frontend is
// asked, briefly, for the run (answered by Temporal's history service and
// its database) and for the task queue's pollers (the matching service).

// noAnswerWhy asks history and matching and says which of them, or which
// worker, kept the call from an answer.
func (c *Client) noAnswerWhy(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, herr := c.tc.WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: c.namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: id}})
	tq, merr := c.tc.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: c.namespace, TaskQueue: &taskqueuepb.TaskQueue{Name: c.taskQueue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW})
	return whyNoAnswer(herr, merr, len(tq.GetPollers()), c.taskQueue)
}

// whyNoAnswer turns what history (historyErr) and matching (matchingErr,
// pollers) answered into one reason.
func whyNoAnswer(historyErr, matchingErr error, pollers int, taskQueue string) string {
	var notFound *serviceerror.NotFound
	if errors.As(historyErr, &notFound) {
		historyErr = nil // history answered: there is no such run
	}
	switch {
	case historyErr != nil && matchingErr != nil:
		return fmt.Sprintf("Temporal's history and matching services do not answer (they, or their database, PostgreSQL, are down): history: %s; matching: %s",
			short(historyErr), short(matchingErr))
	case historyErr != nil:
		return fmt.Sprintf("Temporal's history service does not answer (it, or its database, PostgreSQL, is down): %s", short(historyErr))
	case matchingErr != nil:
		return fmt.Sprintf("Temporal's matching service does not answer (it, or its database, PostgreSQL, is down): %s", short(matchingErr))
	case pollers == 0:
		return fmt.Sprintf("no worker polls task queue %q: start one (make dev, or the worker binary with CARTWRIGHT_TASK_QUEUE=%s)", taskQueue, taskQueue)
	}
	return fmt.Sprintf("%d worker(s) poll task queue %q and Temporal answers, but no worker answered in time (busy or stuck: see the worker's log)", pollers, taskQueue)
}

// tlsWhy explains a dial error that is a TLS failure in words an operator
// acts on: a server certificate the configured CA does not trust, or a
// server that closed the handshake because it refuses our client
// certificate (which gRPC reports only as a broken pipe or a reset).
func tlsWhy(why string) (string, bool) {
	l := strings.ToLower(why)
	switch {
	case strings.Contains(l, "x509") || strings.Contains(l, "certificate signed by unknown authority"):
		return "the server's TLS certificate is not signed by the CA in TEMPORAL_TLS_SERVER_CA_CERT_PATH (another CA?), or names another host (TEMPORAL_TLS_SERVER_NAME): " + why, true
	case strings.Contains(l, "broken pipe") || strings.Contains(l, "connection reset") || strings.Contains(l, "tls: ") || strings.Contains(l, "handshake"):
		return "the server closed the TLS handshake: it does not accept our client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH signed by a CA it does not trust?) or expects another TLS setup: " + why, true
	}
	return why, false
}

// tokenWhy explains a dial that failed fetching the program's own access
// token (internal/servicetoken, docs/operators.md#sign-in-on-the-cluster):
// Temporal was never asked. The provider's certificate, its refusal of the
// client, or the provider being down (Hydra answers invalid_client when
// its database is down) are what to check, not TEMPORAL_*.
func tokenWhy(why string) (string, bool) {
	if !strings.Contains(why, "access token from ") {
		return why, false
	}
	l := strings.ToLower(why)
	switch {
	case strings.Contains(l, "x509") || strings.Contains(l, "certificate"):
		return "this program's access token could not be fetched: the provider's TLS certificate is not trusted (CARTWRIGHT_OIDC_CA_FILE for a private CA): " + why, true
	case strings.Contains(l, "connection refused") || strings.Contains(l, "no such host") || strings.Contains(l, "timeout"):
		return "this program's access token could not be fetched: the OpenID provider does not answer (CARTWRIGHT_OIDC_TOKEN_URL): " + why, true
	}
	return "this program's access token could not be fetched: the OpenID provider refused it (CARTWRIGHT_OIDC_CLIENT_ID and its secret, or the provider's own database down): " + why, true
}
