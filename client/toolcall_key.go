package client

import (
	"context"
	"errors"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// builtinSpecs are the specs of the tools cartwright's workers serve, by
// name: what a call is checked against before it starts anything.
var builtinSpecs = func() map[string]toolkit.Spec {
	m := map[string]toolkit.Spec{}
	for _, list := range [][]toolkit.Spec{commerce.Specs(), support.Specs(), onboarding.Specs()} {
		for _, s := range list {
			m[s.Name] = s
		}
	}
	return m
}()

// checkCallable refuses, before any start, what the worker would refuse
// without running the tool: an internal tool (docs/quote-seals.md#internal-tools)
// and an input that fails the tool's input schema
// (docs/envelope.md#idempotency: a refused input starts nothing and leaves
// the key free). A tool this build does not know is left to the worker's
// registry, which answers NOT_FOUND.
func checkCallable(call toolkit.ToolCall) error {
	spec, ok := builtinSpecs[call.Tool]
	if !ok {
		return nil
	}
	if spec.Internal {
		return toolkit.InternalToolError(call.Tool)
	}
	return toolkit.BuiltinSchemas().CheckToolInput(call.Tool, call.Input, nil)
}

// sameCall checks that the run a tool call attached to (h) was started for
// the same call: the fingerprint in its memo (or, for a run started without
// one, of the input in its first event) must be want. Another one is
// CONFLICT, as Stripe answers a reused idempotency key with other
// parameters (docs/envelope.md#idempotency).
func (c *Client) sameCall(ctx context.Context, h Handle, call toolkit.ToolCall, want string) error {
	desc, err := c.describe(ctx, h)
	if err != nil {
		return err
	}
	got, err := c.toolCallFingerprint(ctx, h, desc)
	if err != nil || got == want {
		return err
	}
	key := call.Request.IdempotencyKey
	if key == "" {
		key = call.Request.RequestID
	}
	return KeyConflict(call.Tool, key, got, h.WorkflowID)
}

// KeyConflict is the CONFLICT of a key reused with other arguments
// (docs/envelope.md#idempotency); workflowID names the run that holds the
// key, "" for a read answered without one (docs/evidence.md#direct-calls).
func KeyConflict(tool, key, firstDigest, workflowID string) *toolkit.Error {
	e := errf(toolkit.Conflict, "idempotency key %s was already used for %s with different arguments; use a new key for a new request", key, tool).
		WithDetail("tool", tool).WithDetail("idempotency_key", key).WithDetail("reason", "arguments differ").
		WithDetail("first_request_digest", firstDigest)
	if workflowID != "" {
		e = e.WithDetail("workflow_id", workflowID)
	}
	return e.WithDetail("fields", []string{"request.idempotency_key"}).
		WithRecovery("send the new request with a new idempotency key, or repeat the first request unchanged")
}

// toolCallFingerprint is the input fingerprint of tool-call run h.
func (c *Client) toolCallFingerprint(ctx context.Context, h Handle, desc *workflowservice.DescribeWorkflowExecutionResponse) (string, error) {
	return c.startFingerprint(ctx, h, desc, func(payloads *commonpb.Payloads) (string, error) {
		var in toolcall.Input
		if err := c.dc.FromPayloads(payloads, &in); err != nil {
			return "", err
		}
		return toolcall.Fingerprint(in.Call)
	})
}

// waitToolCall waits for the tool call's answer. A run that gave its key
// back (toolcall.ReleasedKeyType: a retryable failure or a refused input)
// failed, but its failure carries the envelope: that is the answer.
func (c *Client) waitToolCall(ctx context.Context, workflowID string, deadline time.Time) (toolcall.Result, error) {
	var res toolcall.Result
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := c.tc.GetWorkflow(wctx, workflowID, "").Get(wctx, &res)
	if err == nil {
		return res, nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == toolcall.ReleasedKeyType && app.HasDetails() {
		var released toolcall.Result
		if app.Details(&released) == nil {
			return released, nil
		}
	}
	if wctx.Err() != nil && ctx.Err() == nil {
		return res, errf(toolkit.Timeout, "%s is still running at the deadline", workflowID)
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return res, errf(toolkit.NotFound, "workflow %s not found in namespace %s", workflowID, c.namespace).WithCause(err)
	}
	return res, c.wrap(err, workflowID, "wait for")
}
