package client_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// TestShortKeyIsRefusedNamingTheFieldSent (docs/envelope.md#idempotency): a
// tool call's key is its idempotency_key, else its request_id. A caller
// that sent a short (or bare-number) request_id and no idempotency_key is
// refused, before anything starts, with a message and details.fields
// naming request_id — the field it sent — and one that sent a short
// idempotency_key with idempotency_key; neither call starts a run.
func TestShortKeyIsRefusedNamingTheFieldSent(t *testing.T) {
	c, _ := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	input := json.RawMessage(`{"currency":"EUR","items":[{"sku":"` + tshirt.SKU + `","quantity":1}]}`)
	actor := toolkit.Actor{Type: toolkit.ActorAgent, ID: "shop-agent"}
	cases := []struct {
		name            string
		req             toolkit.Request
		field, notField string
	}{
		{"short request_id", toolkit.Request{RequestID: "r-1", Actor: actor, UserID: "u_client"}, "request_id", "idempotency_key"},
		{"bare-number request_id", toolkit.Request{RequestID: "4915112345678", Actor: actor, UserID: "u_client"}, "request_id", "idempotency_key"},
		{"short idempotency_key", toolkit.Request{RequestID: key("req"), IdempotencyKey: "k-1", Actor: actor, UserID: "u_client"}, "idempotency_key", "request_id must"},
	}
	for _, c2 := range cases {
		call := toolkit.ToolCall{Tool: "pricing.get_realtime_quote", Request: c2.req, Input: input}
		env, _, err := c.CallTool(ctx, call, time.Now().Add(10*time.Second))
		te := wantCode(t, c2.name, err, toolkit.InvalidArgument)
		if !strings.HasPrefix(te.Message, c2.field+" must") || strings.Contains(te.Message, c2.notField) ||
			!reflect.DeepEqual(te.Details["fields"], []string{"request." + c2.field}) {
			t.Fatalf("%s: %q %v, want a message and fields naming %s", c2.name, te.Message, te.Details, c2.field)
		}
		if env.OK || env.Error == nil || env.Error.Message != te.Message {
			t.Fatalf("%s: envelope %+v", c2.name, env.Error)
		}
		key := c2.req.IdempotencyKey
		if key == "" {
			key = c2.req.RequestID
		}
		if _, derr := c.Temporal().DescribeWorkflowExecution(ctx, toolcall.IDPrefix+"u_client/"+key, ""); derr == nil {
			t.Fatalf("%s: a run was started", c2.name)
		}
	}
}
