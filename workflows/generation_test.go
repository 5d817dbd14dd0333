package workflows

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// onGeneration runs the fixture's order as client.StartDraftOrder starts it
// today, and records whether each create call ran as a local activity.
func onGeneration(t *testing.T) (*fixture, *[]bool) {
	f := newFixture(t)
	f.in.Generation = CurrentGeneration
	// Version markers belong to runs without a generation: asking one
	// here would cost the history a marker and a visibility write.
	for _, change := range []string{changeLocalTools, changeToolActivity, changeComplianceMode, outageChange} {
		change := change
		f.env.OnGetVersion(change, workflow.DefaultVersion, 1).Run(func(mock.Arguments) {
			t.Errorf("a run on generation %d asked GetVersion(%s)", CurrentGeneration, change)
		}).Return(workflow.Version(1))
	}
	local := &[]bool{}
	f.beforeCreate = func(ctx context.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		*local = append(*local, activity.GetInfo(ctx).IsLocalActivity)
	}
	return f, local
}

func TestGenerationWritesInTheWorker(t *testing.T) {
	f, local := onGeneration(t)
	f.at(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || res.DraftOrder == nil || len(res.Evidence) != 6 {
		t.Fatalf("result = %+v", res)
	}
	if !reflect.DeepEqual(*local, []bool{true}) {
		t.Fatalf("create calls ran local = %v, want one local call", *local)
	}
	// CREATING lasted milliseconds inside the task: no upsert for it.
	want := []string{"state=" + StateNeedsConfirm, "state=" + StateDraftCreated}
	if got := f.upserts[len(f.upserts)-2:]; !reflect.DeepEqual(got, want) || slices.Contains(f.upserts, "state="+StateCreating) {
		t.Fatalf("search attribute upserts %v, want them to end with %v and no %s", f.upserts, want, StateCreating)
	}
	checkCorrelationIDs(t, f)
}

func TestGenerationWriteHandsOverToTheActivity(t *testing.T) {
	f, local := onGeneration(t)
	// The worker's attempt meets a database that is down; the regular
	// activity's retries outlast it.
	f.fail("CreateDraftOrder", toolkit.Errorf(toolkit.UpstreamError, "database unavailable"), 2)
	f.at(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	if !reflect.DeepEqual(*local, []bool{true, false, false}) {
		t.Fatalf("create calls ran local = %v, want the local attempt, then the activity's two attempts", *local)
	}
	// Waiting on the activity is a state staff can see.
	want := []string{"state=" + StateNeedsConfirm, "state=" + StateCreating, "state=" + StateDraftCreated}
	if got := f.upserts[len(f.upserts)-3:]; !reflect.DeepEqual(got, want) {
		t.Fatalf("search attribute upserts end with %v, want %v", got, want)
	}
	created := f.callsOf("CreateDraftOrder")
	if a, b := created[0], created[2]; !reflect.DeepEqual(a, b) {
		t.Fatalf("the activity repeated another step: %+v then %+v", a, b)
	}
}

func TestGenerationWriteRefusalIsTheAnswer(t *testing.T) {
	f, local := onGeneration(t)
	f.fail("CreateDraftOrder", toolkit.Errorf(toolkit.OutOfStock, "SKU-HEADPHONES sold out"), 1)
	f.at(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateOutOfStock {
		t.Fatalf("result = %+v", res)
	}
	if !reflect.DeepEqual(*local, []bool{true}) {
		t.Fatalf("create calls ran local = %v: a refusal must not be tried again", *local)
	}
}

func TestGenerationIsChecked(t *testing.T) {
	f := newFixture(t)
	for _, g := range []int{-1, CurrentGeneration + 1} {
		in := f.in
		in.Generation = g
		_, err := in.Check()
		if toolkit.CodeOf(err) != toolkit.InvalidArgument {
			t.Errorf("generation %d: %v, want INVALID_ARGUMENT", g, err)
		}
	}
	fp0, _ := DraftOrderFingerprint(f.in)
	in := f.in
	in.Generation = CurrentGeneration
	if fp, _ := DraftOrderFingerprint(in); fp != fp0 {
		t.Error("the generation changed the order's fingerprint: a retry from an older client would be CONFLICT")
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
		if got := retryable(c.err); got != c.want {
			t.Errorf("retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
