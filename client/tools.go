package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// CallTool runs one tool durably through the generic ToolCall workflow and
// waits up to deadline for its envelope. The same call (same user and
// idempotency key, or request id for a read tool) started twice reaches the
// same run and the same answer. A tool failure comes back as its
// *toolkit.Error.
func (c *Client) CallTool(ctx context.Context, call toolkit.ToolCall, deadline time.Time) (toolkit.Response, Handle, error) {
	opts, err := workflows.ToolCallStartOptions(c.taskQueue, call)
	if err != nil {
		return toolkit.Response{}, Handle{}, errf(toolkit.InvalidArgument, "%v", err)
	}
	h, err := c.start(ctx, opts, workflows.ToolCallWorkflowName, workflows.ToolCallInput{Call: call})
	if err != nil {
		return toolkit.Response{}, h, err
	}
	var res workflows.ToolCallResult
	err = c.wait(ctx, h.WorkflowID, deadline, &res)
	return res.Envelope, h, err
}

// ListTools asks a worker of the task queue for the specs of every tool it
// serves (the worker's registry is the source of truth).
func (c *Client) ListTools(ctx context.Context, deadline time.Time) ([]toolkit.Spec, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	opts := sdkclient.StartWorkflowOptions{
		ID: "list-tools/" + hex.EncodeToString(b), TaskQueue: c.taskQueue, StaticSummary: "list tools",
	}
	h, err := c.start(ctx, opts, workflows.ListToolsWorkflowName, workflows.ListToolsInput{})
	if err != nil {
		return nil, err
	}
	var res workflows.ListToolsResult
	err = c.wait(ctx, h.WorkflowID, deadline, &res)
	return res.Tools, err
}
