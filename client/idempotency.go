package client

import (
	"context"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// DraftOrderStartTool names the start of a draft order in a CONFLICT's
// details: the MCP tool that starts it (docs/mcp.md).
const DraftOrderStartTool = draftorder.StartTool

// sameOrder checks that the run a start attached to (h) is the order this
// start asked for: its input fingerprint, read from the run's memo, must
// be want. Another one is CONFLICT naming the key (the rules are
// draftorder.StartOptions'). A run without the memo (started
// before it existed, or by a bare SDK start) is fingerprinted from the
// input in its first history event.
func (c *Client) sameOrder(ctx context.Context, h Handle, key, want string) error {
	desc, err := c.describe(ctx, h)
	if err != nil {
		return err
	}
	return c.sameOrderAs(ctx, h, desc, key, want)
}

// sameOrderAs is sameOrder on a description of h already read.
func (c *Client) sameOrderAs(ctx context.Context, h Handle, desc *workflowservice.DescribeWorkflowExecutionResponse, key, want string) error {
	got, err := c.runFingerprint(ctx, h, desc)
	if err != nil {
		return err
	}
	if got == want {
		return nil
	}
	return errf(toolkit.Conflict,
		"idempotency_key %s was already used for a different draft order (other items, address, currency, service or incoterm); "+
			"use a new key for a new order", key).
		WithDetail("tool", DraftOrderStartTool).WithDetail("idempotency_key", key).WithDetail("reason", "arguments differ").
		WithDetail("first_request_digest", got).WithDetail("workflow_id", h.WorkflowID).
		WithDetail("fields", []string{"request.idempotency_key"}).
		WithRecovery("start the new order with a new idempotency_key, or repeat the original order unchanged")
}

// describe reads run h's description (memo, start request ids).
func (c *Client) describe(ctx context.Context, h Handle) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	desc, err := c.tc.DescribeWorkflowExecution(ctx, h.WorkflowID, h.RunID)
	if err != nil {
		return nil, c.wrap(err, h.WorkflowID, "describe")
	}
	return desc, nil
}

// runFingerprint is the input fingerprint of draft-order run h.
func (c *Client) runFingerprint(ctx context.Context, h Handle, desc *workflowservice.DescribeWorkflowExecutionResponse) (string, error) {
	return c.startFingerprint(ctx, h, desc, func(payloads *commonpb.Payloads) (string, error) {
		var in draftorder.Input
		if err := c.dc.FromPayloads(payloads, &in); err != nil {
			return "", err
		}
		if checked, err := in.Check(); err == nil {
			in = checked
		}
		return draftorder.Fingerprint(in)
	})
}

// startFingerprint is the input fingerprint of run h: the one its memo
// keeps (workflows.MemoInputFingerprint), or for a run started without it,
// fingerprintOf the input in its first history event.
func (c *Client) startFingerprint(ctx context.Context, h Handle, desc *workflowservice.DescribeWorkflowExecutionResponse,
	fingerprintOf func(*commonpb.Payloads) (string, error)) (string, error) {
	if p := desc.GetWorkflowExecutionInfo().GetMemo().GetFields()[workflows.MemoInputFingerprint]; p != nil {
		var fp string
		if err := c.dc.FromPayload(p, &fp); err == nil && fp != "" {
			return fp, nil
		}
	}
	it := c.tc.GetWorkflowHistory(ctx, h.WorkflowID, h.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return "", errf(toolkit.UpstreamError, "%s has no history", h.WorkflowID)
	}
	ev, err := it.Next()
	if err != nil {
		return "", c.wrap(err, h.WorkflowID, "read the history of")
	}
	fp, err := fingerprintOf(ev.GetWorkflowExecutionStartedEventAttributes().GetInput())
	if err != nil {
		return "", errf(toolkit.UpstreamError, "fingerprint of the input of %s: %v", h.WorkflowID, err)
	}
	return fp, nil
}
