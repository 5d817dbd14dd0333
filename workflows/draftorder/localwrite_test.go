package draftorder

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// asStarted runs the fixture's order as client.StartDraftOrder starts it
// (its start options and search attributes), and records whether each
// create call ran as a local activity.
func asStarted(t *testing.T) (*fixture, *[]bool) {
	f := newFixture(t)
	opts, err := StartOptions("test", f.in)
	if err != nil {
		t.Fatal(err)
	}
	f.Env.SetStartWorkflowOptions(opts)
	if err := f.Env.SetTypedSearchAttributesOnStart(opts.TypedSearchAttributes); err != nil {
		t.Fatal(err)
	}
	local := &[]bool{}
	f.beforeCreate = func(ctx context.Context) {
		f.Mu.Lock()
		defer f.Mu.Unlock()
		*local = append(*local, activity.GetInfo(ctx).IsLocalActivity)
	}
	return f, local
}

func TestWriteRunsInTheWorker(t *testing.T) {
	f, local := asStarted(t)
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || res.DraftOrder == nil || len(res.Evidence) != 5 {
		t.Fatalf("result = %+v", res)
	}
	if !reflect.DeepEqual(*local, []bool{true}) {
		t.Fatalf("create calls ran local = %v, want one local call", *local)
	}
	// The start showed where the order would rest (NEEDS_USER_CONFIRMATION);
	// QUOTING, PRICING and CREATING lasted milliseconds inside a task: the
	// one upsert is the end.
	if want := heldUpserts; !reflect.DeepEqual(f.Upserts, want) {
		t.Fatalf("search attribute upserts %v, want %v", f.Upserts, want)
	}
	checkCorrelationIDs(t, f)
}

func TestWriteHandsOverToTheActivity(t *testing.T) {
	f, local := asStarted(t)
	// The worker's attempt meets a database that is down; the regular
	// activity's retries outlast it.
	f.Fail("CreateDraftOrder", toolkit.Errorf(toolkit.UpstreamError, "database unavailable"), 2)
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	if !reflect.DeepEqual(*local, []bool{true, false, false}) {
		t.Fatalf("create calls ran local = %v, want the local attempt, then the activity's two attempts", *local)
	}
	// Waiting on the activity is a state staff can see.
	if want := append([]string{"state=" + StateCreating}, heldUpserts...); !reflect.DeepEqual(f.Upserts, want) {
		t.Fatalf("search attribute upserts %v, want %v", f.Upserts, want)
	}
	created := f.CallsOf("CreateDraftOrder")
	if a, b := created[0], created[2]; !reflect.DeepEqual(a, b) {
		t.Fatalf("the activity repeated another step: %+v then %+v", a, b)
	}
}

func TestWriteRefusalIsTheAnswer(t *testing.T) {
	f, local := asStarted(t)
	f.Fail("CreateDraftOrder", toolkit.Errorf(toolkit.OutOfStock, "SKU-HEADPHONES sold out"), 1)
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateOutOfStock {
		t.Fatalf("result = %+v", res)
	}
	if !reflect.DeepEqual(*local, []bool{true}) {
		t.Fatalf("create calls ran local = %v: a refusal must not be tried again", *local)
	}
}

func TestOutageShowsWhileQuoting(t *testing.T) {
	f, _ := asStarted(t)
	// Pricing's database is down for longer than the tool's own retries:
	// the order waits it out in QUOTING, and the list must say so.
	f.Fail("GetQuote", toolkit.Errorf(toolkit.UpstreamError, "database unavailable"), 40)
	var during Status
	f.At(20*time.Second, func() { during = f.status() })
	f.At(25*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || during.State != StateQuoting {
		t.Fatalf("result %+v, state during the outage %s", res, during.State)
	}
	// QUOTING while waiting, the total published once the outage ended,
	// (a re-quote of the confirmation: the quote aged during the outage) and
	// the written draft's hold to its end.
	want := []string{"state=" + StateQuoting, "state=" + StateNeedsConfirm}
	if len(f.Upserts) < 5 || !reflect.DeepEqual(f.Upserts[:2], want) || !reflect.DeepEqual(f.Upserts[len(f.Upserts)-3:], heldUpserts) {
		t.Fatalf("search attribute upserts %v, want %v first and %v last", f.Upserts, want, heldUpserts)
	}
}

func TestRetryableMirrorsThePolicy(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{temporal.NewApplicationError("down", string(toolkit.UpstreamError)), true},
		{temporal.NewApplicationError("late", string(toolkit.Timeout)), true},
		{temporal.NewApplicationError("bad", string(toolkit.InvalidArgument)), false},
		{temporal.NewApplicationError("gone", string(toolkit.OutOfStock)), false},
		{temporal.NewNonRetryableApplicationError("final", string(toolkit.UpstreamError), nil), false},
		{temporal.NewCanceledError(), false},
		{errors.New("panic: nil map"), true},
	} {
		if got := flow.Retryable(c.err); got != c.want {
			t.Errorf("retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
