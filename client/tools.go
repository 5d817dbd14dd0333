package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// CallTool runs one tool durably through the generic tool-call workflow
// (ToolCallLocalFirst: docs/performance.md#local-first-write) and
// waits up to deadline for its envelope. The same call (same user and
// idempotency key, or request id for a read tool) started twice reaches the
// same run and the same answer. Every answer is an envelope: a refusal
// (COMPLIANCE_BLOCKED, OUT_OF_STOCK …) is an envelope with ok=false, its
// error and its evidence, and a nil error. The error is for a call that
// did not get an answer (invalid call, unreachable server, deadline); the
// envelope then carries the same error, so a caller printing it prints an
// envelope either way.
//
// The key means one request (docs/envelope.md#idempotency): a call refused
// before it could run (an internal tool, an input its schema refuses)
// starts nothing; the same key with other arguments is CONFLICT naming the
// first request's digest; a call that ended in a retryable failure or a
// refused input gives its key back, so the next call with it runs again.
func (c *Client) CallTool(ctx context.Context, call toolkit.ToolCall, deadline time.Time) (toolkit.Response, Handle, error) {
	if err := checkCallable(call); err != nil {
		return toolkit.ErrorResponse(call.Tool, "", err), Handle{}, err
	}
	opts, err := toolcall.StartOptions(c.taskQueue, call)
	if err != nil {
		// The id's refusal names the field (details.fields); keep it.
		if te, ok := err.(*toolkit.Error); !ok || te.Code != toolkit.InvalidArgument {
			err = errf(toolkit.InvalidArgument, "%v", err)
		}
		return toolkit.ErrorResponse(call.Tool, "", err), Handle{}, err
	}
	h, err := c.start(withTrace(ctx, call.Request.Trace), opts, toolcall.WorkflowName, toolcall.Input{Call: call})
	if err != nil {
		return toolkit.ErrorResponse(call.Tool, "", err), h, err
	}
	if h.Attached {
		if err := c.sameCall(ctx, h, call, opts.Memo[workflows.MemoInputFingerprint].(string)); err != nil {
			return toolkit.ErrorResponse(call.Tool, "", err), h, err
		}
	}
	if deadline.IsZero() {
		deadline = time.Now().Add(24 * time.Hour)
	}
	res, err := c.waitToolCall(ctx, h.WorkflowID, deadline)
	if err != nil {
		return toolkit.ErrorResponse(call.Tool, "", err), h, err
	}
	return res.Envelope, h, nil
}

// ListTools asks a worker of the task queue for the specs of every tool it
// serves (the worker's registry is the source of truth).
func (c *Client) ListTools(ctx context.Context, deadline time.Time) ([]toolkit.Spec, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	opts := sdkclient.StartWorkflowOptions{
		ID: "list-tools/" + hex.EncodeToString(b), TaskQueue: c.taskQueue, StaticSummary: "list tools",
	}
	h, err := c.start(ctx, opts, toolcall.ListToolsWorkflowName, toolcall.ListToolsInput{})
	if err != nil {
		return nil, err
	}
	var res toolcall.ListToolsResult
	err = c.wait(ctx, h.WorkflowID, deadline, &res)
	return res.Tools, err
}
