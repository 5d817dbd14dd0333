package onboardingflow

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// onbReadOnce reads the account status once through callTool, as
// Onboarding does (the tool activity with the tool's spec), so the test
// sees the production retry behaviour and a refusal as the error of its
// code.
func onbReadOnce(ctx workflow.Context, in flowtest.ToolIn[stripetools.AccountStatusInput]) (stripetools.AccountStatus, error) {
	specs := flow.NewToolSpecs([]toolkit.Spec{stripetools.AccountStatusSpec()})
	st, _, err := flow.CallTool[stripetools.AccountStatus](ctx, specs, flow.Call{
		Tool: stripetools.ToolAccountStatus, Req: in.Request, Args: in.Args, Summary: "probe",
	}).Get(ctx)
	return st, err
}

// TestStripeFaultsAreRetriedByTemporal runs the status activity on the dev
// server against a fake Stripe that fails: 500s and a slow answer are
// retried with the 200 ms backoff, a 429 waits for its Retry-After, and an
// error that outlives the three attempts reaches the workflow with its code.
func TestStripeFaultsAreRetriedByTemporal(t *testing.T) {
	testenv.Integration(t)
	tc := clienttest.Dial(t)
	tq := testenv.TaskQueue(t)
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	const acct = "acct_1CwRetryProbe01"
	fake.SetAccount(acct, stripefake.Account{CurrentlyDue: []string{"external_account"}})

	sc, err := stripetools.NewClient(stripetools.Config{SecretKey: "sk_test_51RetryProbeKey00000000", APIBase: fake.URL,
		ReturnURL: "https://shop.example/r", RefreshURL: "https://shop.example/f"})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := stripetools.RegisterTools(reg, sc); err != nil {
		t.Fatal(err)
	}
	w := worker.New(tc, tq, worker.Options{})
	w.RegisterWorkflow(onbReadOnce)
	w.RegisterActivity(&activities.Tools{Invoker: toolkit.NewInvoker(reg, toolkit.DiscardEvidence{}, nil)})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	read := func(t *testing.T) (stripetools.AccountStatus, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
		defer cancel()
		zero := 0
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, onbReadOnce, flowtest.ToolIn[stripetools.AccountStatusInput]{
			Request: toolkit.Request{RequestID: "req-probe", Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "probe"}, UserID: "u_probe"},
			Args:    stripetools.AccountStatusInput{StripeAccountID: acct, MaxAgeSeconds: &zero},
		})
		if err != nil {
			t.Fatal(err)
		}
		var res stripetools.AccountStatus
		err = run.Get(ctx, &res)
		return res, err
	}
	gaps := func() []time.Duration {
		reqs := fake.Requests(stripefake.GetAccount)
		var out []time.Duration
		for i := 1; i < len(reqs); i++ {
			out = append(out, reqs[i].At.Sub(reqs[i-1].At))
		}
		return out
	}
	t.Run("500 twice then ok", func(t *testing.T) {
		before := fake.Count(stripefake.GetAccount)
		fake.Inject(stripefake.GetAccount, stripefake.Fault{Status: http.StatusInternalServerError, Times: 2})
		if _, err := read(t); err != nil {
			t.Fatal(err)
		}
		if n := fake.Count(stripefake.GetAccount) - before; n != 3 {
			t.Fatalf("requests = %d, want 3 (two failures, one success)", n)
		}
		g := gaps()
		if last := g[len(g)-1]; last < 300*time.Millisecond {
			t.Fatalf("second retry after %s, want the 400 ms backoff step", last)
		}
	})

	t.Run("429 waits for Retry-After", func(t *testing.T) {
		fake.Inject(stripefake.GetAccount, stripefake.Fault{Status: http.StatusTooManyRequests, RetryAfter: "2", Times: 1})
		if _, err := read(t); err != nil {
			t.Fatal(err)
		}
		if g := gaps(); g[len(g)-1] < 2*time.Second {
			t.Fatalf("retried after %s, before Retry-After", g[len(g)-1])
		}
	})

	t.Run("slow answer times out and is retried", func(t *testing.T) {
		before := fake.Count(stripefake.GetAccount)
		fake.Inject(stripefake.GetAccount, stripefake.Fault{Delay: time.Minute, Times: 1})
		if _, err := read(t); err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests(stripefake.GetAccount)[before:]
		if len(reqs) != 2 {
			t.Fatalf("requests = %d, want 2", len(reqs))
		}
		// The outcome, not its speed: the tool's 3 s limit gave up on the
		// held request (a minute, far past any deadline) and the retry
		// answered, however slow this machine is.
		// (The fake sees the closed connection a moment after the caller.)
		testenv.WaitFor(t, 10*time.Second, "the 3 s tool limit cut the slow call (the fake saw it abandoned)", func() (bool, error) {
			return fake.Requests(stripefake.GetAccount)[before].Abandoned, nil
		})
		if reqs[1].Abandoned {
			t.Fatal("the retry was abandoned too, yet the read succeeded")
		}
	})

	t.Run("persistent 500 ends with UPSTREAM_ERROR after 3 attempts", func(t *testing.T) {
		before := fake.Count(stripefake.GetAccount)
		fake.Inject(stripefake.GetAccount, stripefake.Fault{Status: http.StatusInternalServerError})
		defer fake.ClearFaults()
		_, err := read(t)
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != string(toolkit.UpstreamError) || toolkit.AsError(err).Details["upstream_code"] != "upstream_error" {
			t.Fatalf("err = %v", err)
		}
		if n := fake.Count(stripefake.GetAccount) - before; n != 3 {
			t.Fatalf("requests = %d, want 3", n)
		}
	})

	t.Run("unknown account is not retried", func(t *testing.T) {
		before := fake.Count(stripefake.GetAccount)
		fake.SetAccount(acct, stripefake.Account{})
		ctx := context.Background()
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, onbReadOnce, flowtest.ToolIn[stripetools.AccountStatusInput]{
			Request: toolkit.Request{RequestID: "req-probe", Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "probe"}, UserID: "u_probe"},
			Args:    stripetools.AccountStatusInput{StripeAccountID: "acct_1CwNoSuchAcct01"},
		})
		if err != nil {
			t.Fatal(err)
		}
		err = run.Get(ctx, nil)
		if toolkit.CodeOf(err) != toolkit.NotFound || fake.Count(stripefake.GetAccount)-before != 1 {
			t.Fatalf("err %v requests %d", err, fake.Count(stripefake.GetAccount)-before)
		}
	})
}
