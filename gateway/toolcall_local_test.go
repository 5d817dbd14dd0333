package gateway_test

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/worker/wiring"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// TestToolCallLocalFirstIsOneWorkflowTask (docs/performance.md#local-first-write):
// a write tool called through the Go client runs as ToolCallLocalFirst,
// answered in the run's one workflow task (a marker, no activity task),
// and the run audits CLEAN against its evidence; a read does the same.
func TestToolCallLocalFirstIsOneWorkflowTask(t *testing.T) {
	s := newStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	quote := loginLinkCall(newKey("local-first"), "acct_1CwJaneCrafts001")
	quote.Tool, quote.Input = commerce.ToolGetQuote, []byte(`{"currency": "EUR", "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 1}]}`)
	quote.Request.IdempotencyKey = ""
	for _, c := range []struct {
		what string
		call func() (string, error)
	}{
		{"write", func() (string, error) {
			env, h, err := s.client.CallTool(ctx, loginLinkCall(newKey("local-first"), "acct_1CwJaneCrafts001"), time.Now().Add(time.Minute))
			if err == nil && !env.OK {
				t.Fatalf("write: %+v", env.Error)
			}
			return h.WorkflowID, err
		}},
		{"read", func() (string, error) {
			env, h, err := s.client.CallTool(ctx, quote, time.Now().Add(time.Minute))
			if err == nil && !env.OK {
				t.Fatalf("read: %+v", env.Error)
			}
			return h.WorkflowID, err
		}},
	} {
		id, err := c.call()
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		desc, err := s.Temporal.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		if wt := desc.WorkflowExecutionInfo.Type.Name; wt != toolcall.WorkflowName {
			t.Fatalf("%s ran as %s", c.what, wt)
		}
		tasks, activities, markers := 0, 0, 0
		it := s.Temporal.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			switch ev.EventType {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				tasks++
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				activities++
			case enumspb.EVENT_TYPE_MARKER_RECORDED:
				markers++
			}
		}
		if tasks != 1 || activities != 0 || markers != 1 {
			t.Fatalf("%s: %d workflow tasks, %d activities, %d markers; want 1, 0, 1", c.what, tasks, activities, markers)
		}
		rep, err := audit.Audit(ctx, audit.Deps{Temporal: s.Temporal, Evidence: s.Store, Specs: wiring.ToolSpecs(),
			DataConverter: clienttest.DataConverter()}, audit.ByID(id, ""))
		if err != nil || !rep.Clean || len(rep.Activities) != 1 {
			t.Fatalf("%s: audit %v: %+v", c.what, err, rep)
		}
	}
}
