package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestCallToolAndListTools calls a tool through the generic ToolCall
// workflow on the real stack: the envelope carries evidence, the same call
// twice attaches to the first run, a refused call comes back with its code,
// and the worker's catalogue lists the commerce tools.
func TestCallToolAndListTools(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(60*time.Second))
	defer cancel()
	deadline := time.Now().Add(testenv.Deadline(45 * time.Second))

	call := toolkit.ToolCall{
		Tool:    "pricing.get_realtime_quote",
		Request: toolkit.Request{RequestID: key("req"), Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "shop-agent"}, UserID: "u_client"},
		Input:   json.RawMessage(`{"currency":"EUR","items":[{"sku":"` + tshirt.SKU + `","quantity":2}]}`),
	}
	env, h, err := c.CallTool(ctx, call, deadline)
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if !env.OK || env.SnapshotID() == "" || h.Attached {
		t.Fatalf("envelope %+v, handle %+v", env, h)
	}
	snap, err := s.Store.Get(ctx, env.SnapshotID())
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := toolkit.CanonicalHash(env.Data); snap.OutputHash != want {
		t.Fatalf("stored hash %s, envelope data hashes to %s", snap.OutputHash, want)
	}
	again, h2, err := c.CallTool(ctx, call, deadline)
	if err != nil || !h2.Attached || h2.RunID != h.RunID || again.SnapshotID() != env.SnapshotID() {
		t.Fatalf("second call: %v %+v, snapshot %s vs %s", err, h2, again.SnapshotID(), env.SnapshotID())
	}

	call.Request.RequestID = key("req")
	call.Input = json.RawMessage(`{"currency":"EUR","items":[{"sku":"` + tshirt.SKU + `","quantity":999}]}`)
	// A refusal is an envelope (ok=false, its
	// code and recovery) with its own evidence snapshot, not an error.
	refused, _, err := c.CallTool(ctx, call, deadline)
	if err != nil || refused.OK || refused.Status != toolkit.StatusError || refused.Error == nil ||
		refused.Error.Code != toolkit.OutOfStock || refused.SnapshotID() == "" || refused.Tool != call.Tool {
		t.Fatalf("quantity beyond stock: err %v, envelope %+v (error %+v)", err, refused, refused.Error)
	}

	specs, err := c.ListTools(ctx, deadline)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, sp := range specs {
		names[sp.Name] = true
	}
	for _, want := range []string{"pricing.get_realtime_quote", "checkout.create_draft_order", "support.record_approval"} {
		if !names[want] {
			t.Fatalf("ListTools lacks %s: %v", want, names)
		}
	}
}
