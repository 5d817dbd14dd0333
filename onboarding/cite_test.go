package onboarding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func citeInvoker(t *testing.T, ix Citer) *toolkit.Invoker {
	t.Helper()
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterCite(reg, ix); err != nil {
		t.Fatal(err)
	}
	return toolkit.NewInvoker(reg, sink{}, nil)
}

// sink stands in for the evidence store (knowledge.cite requires evidence).
type sink struct{ toolkit.Unstaged }

func (sink) RecordStep(context.Context, toolkit.Snapshot) (toolkit.Recorded, error) {
	return toolkit.Recorded{SnapshotID: "ev_test"}, nil
}

func req() toolkit.Request {
	return toolkit.Request{RequestID: "req-c-1", Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "wizard"}, UserID: "u_1"}
}

func TestCiteOverTheCorpus(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(60*time.Second))
	defer cancel()
	ix, err := knowledge.Load(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	inv := citeInvoker(t, ix)

	resp, err := inv.Invoke(ctx, ToolCite, req(), map[string]any{"claim": "external_account is currently due"})
	if err != nil {
		t.Fatal(err)
	}
	var res knowledge.CiteResult
	if err := resp.Decode(&res); err != nil {
		t.Fatal(err)
	}
	if resp.Status != toolkit.StatusOK || !res.Grounded || len(res.Citations) == 0 ||
		res.Citations[0].Runbook != "knowledge/corpus/external-account.md" || resp.Meta.RulesetVersion != res.CorpusVersion {
		t.Fatalf("status %s result %+v", resp.Status, res)
	}
	again, err := inv.Invoke(ctx, ToolCite, req(), map[string]any{"claim": "external_account is currently due"})
	if err != nil || !again.Meta.CacheHit || !slices.Contains(again.Warnings, toolkit.WarnUsedCache) {
		t.Fatalf("repeat: err %v meta %+v", err, again.Meta)
	}

	resp, err = inv.Invoke(ctx, ToolCite, req(), map[string]any{"claim": "can I get a refund for my order", "top_k": 2})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Decode(&res)
	if resp.Status != toolkit.StatusEmpty || res.Grounded || !slices.Contains(resp.Warnings, WarnNotGrounded) {
		t.Fatalf("off-topic claim: status %s warnings %v result %+v", resp.Status, resp.Warnings, res)
	}
}

type failingCiter struct{ err error }

func (f failingCiter) Cite(context.Context, string, int) (knowledge.CiteResult, error) {
	return knowledge.CiteResult{}, f.err
}

func TestCiteErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		err      error
		code     toolkit.Code
		upstream any
	}{
		{fmt.Errorf("%w: claim too short", knowledge.ErrInvalidArgument), toolkit.InvalidArgument, nil},
		{errors.New("connection refused"), toolkit.UpstreamError, "search_error"},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), toolkit.Timeout, "timeout"},
	}
	for _, c := range cases {
		_, err := citeInvoker(t, failingCiter{c.err}).Invoke(ctx, ToolCite, req(), map[string]any{"claim": "tos_acceptance.date"})
		te := toolkit.AsError(err)
		if te.Code != c.code || te.Details["upstream_code"] != c.upstream {
			t.Fatalf("%v: got %+v", c.err, te)
		}
		if c.code != toolkit.InvalidArgument && te.RecoverySuggestion != UngroundedRecovery {
			t.Fatalf("%v: recovery %q", c.err, te.RecoverySuggestion)
		}
	}
	// Bad input never reaches the index.
	_, err := citeInvoker(t, failingCiter{errors.New("must not be called")}).Invoke(ctx, ToolCite, req(), map[string]any{"claim": "x", "top_k": 99})
	if toolkit.CodeOf(err) != toolkit.InvalidArgument {
		t.Fatalf("err = %v", err)
	}
}
