package gateway_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

// TestDirectReadMakesOneAttempt (docs/mcp.md#direct-reads): a direct read
// whose tool fails in a way a retry could fix is answered at once as that
// retryable error: the tool ran once (the gateway keeps no retry loop of
// its own), nothing is written, and the key stays free, so the same key
// runs the tool again.
func TestDirectReadMakesOneAttempt(t *testing.T) {
	s := newStack(t)
	spec, ok := s.Deps.Registry.Spec(commerce.ToolGetQuote)
	if !ok || spec.Retry.MaxAttempts == 1 {
		t.Fatalf("the quote tool's spec %+v: the test needs a tool whose policy retries", spec.Retry)
	}
	var calls atomic.Int32
	reg := toolkit.NewRegistry(schemas.FS)
	reg.MustRegister(spec, func(context.Context, *toolkit.Call) (*toolkit.Output, error) {
		calls.Add(1)
		return nil, toolkit.Errorf(toolkit.UpstreamError, "the catalogue cannot be reached")
	})
	gw, err := gateway.New(gateway.Options{
		Client: s.client, Tokens: s.tokens, Specs: s.Deps.Registry.Specs(), Schemas: schemas.FS,
		Config: wiringtest.Config(s.TaskQueue, s.EvidenceKey), ProgressEvery: 200 * time.Millisecond,
		Direct: &gateway.DirectReads{Invoker: toolkit.NewInvoker(reg, s.Deps.Evidence, nil), Evidence: s.Deps.Evidence},
	})
	if err != nil {
		t.Fatal(err)
	}
	flaky := *s
	flaky.gw, flaky.url = gw, serve(t, gw).URL+gateway.Path
	key := newKey("direct-once")
	for attempt := int32(1); attempt <= 2; attempt++ {
		res, env := call(t, flaky.connect(t, s.token, nil), commerce.ToolGetQuote, quoteArgs(key, 1))
		if !res.IsError || env.Error == nil || env.Error.Code != toolkit.UpstreamError || !env.Error.CanRetry {
			t.Fatalf("call %d: %+v (error %+v), want a retryable UPSTREAM_ERROR", attempt, env, env.Error)
		}
		if n := calls.Load(); n != attempt {
			t.Fatalf("call %d ran the tool %d times in all, want %d: one attempt per call", attempt, n, attempt)
		}
	}
	chain := evidence.DirectChainKey(evidence.HashUserID(s.actor.UserID()), key)
	var rows int
	if err := s.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM evidence_snapshots WHERE chain_key = $1)
		+ (SELECT count(*) FROM evidence_direct_calls WHERE chain_key = $1)`, chain).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d rows written for failures worth retrying (%v), want none", rows, err)
	}
}
