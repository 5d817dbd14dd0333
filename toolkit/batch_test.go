package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// stagingSink is a staging EvidenceSink in memory: ids count from 1 whether a step
// is recorded or staged, so a staged call and a recorded one get the same.
type stagingSink struct {
	mu        sync.Mutex
	n         int
	stored    []Snapshot
	commits   int
	commitErr error
}

type stagedSnap struct {
	id   string
	snap Snapshot
}

func (s stagedSnap) SnapshotID() string { return s.id }

func (s *stagingSink) next() string { s.n++; return fmt.Sprintf("ev_%d", s.n) }

func (s *stagingSink) RecordStep(_ context.Context, snap Snapshot) (Recorded, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stored = append(s.stored, snap)
	return Recorded{SnapshotID: s.next(), OutputHash: snap.OutputHash}, nil
}

func (s *stagingSink) StageStep(snap Snapshot) (Staged, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return stagedSnap{id: s.next(), snap: snap}, nil
}

func (s *stagingSink) CommitSteps(_ context.Context, steps []Staged) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits++
	if s.commitErr != nil {
		return s.commitErr
	}
	for _, st := range steps {
		s.stored = append(s.stored, st.(stagedSnap).snap)
	}
	return nil
}

func (s *stagingSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.stored)
}

// newStagingInvoker is newTestInvoker on a staging sink, with a fixed clock.
func newStagingInvoker(t *testing.T, h Handler) (*Invoker, *stagingSink) {
	t.Helper()
	reg := NewRegistry(testSchemas)
	reg.MustRegister(echoSpec(), h)
	sink := &stagingSink{}
	inv := NewInvoker(reg, sink, nil)
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	inv.now = func() time.Time { return at }
	return inv, sink
}

// A staged call's envelope is exactly the immediately recorded one's, for
// answers and refusals; nothing is written before the commit, everything
// after it.
func TestBatchEnvelopeIsTheRecordedOne(t *testing.T) {
	answer := func(_ context.Context, c *Call) (*Output, error) {
		var in map[string]any
		if err := c.Bind(&in); err != nil {
			return nil, err
		}
		if in["country"] == "KP" {
			return nil, Errorf(ComplianceBlocked, "no shipping to %s", in["country"])
		}
		return &Output{Data: in, RulesetVersion: "r-1"}, nil
	}
	inputs := []map[string]any{{"country": "DE", "quantity": 2}, {"country": "KP", "quantity": 1}, {"country": "x"}}
	calls := func(inv *Invoker, b *Batch) (out []string) {
		ctx := WithCall(context.Background(), CallContext{WorkflowID: "wf-1", RunID: "run-1", ActivityID: "7", ActivityType: "Quote", Attempt: 1})
		for _, in := range inputs {
			resp, err := inv.InvokeIn(ctx, b, "test.echo", validRequest(), in)
			b, _ := json.Marshal(resp)
			out = append(out, fmt.Sprintf("%s %v", b, CodeOf(err)))
		}
		return out
	}
	direct, directSink := newStagingInvoker(t, answer)
	want := calls(direct, nil)

	inv, sink := newStagingInvoker(t, answer)
	b := inv.NewBatch()
	if b == nil {
		t.Fatal("NewBatch on a staging sink is nil")
	}
	got := calls(inv, b)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d staged:\n %s\nrecorded:\n %s", i, got[i], want[i])
		}
	}
	if sink.count() != 0 || b.Len() != len(inputs) {
		t.Fatalf("before the commit: %d written, %d staged", sink.count(), b.Len())
	}
	if err := inv.CommitBatch(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if sink.count() != len(inputs) || b.Len() != 0 || sink.commits != 1 {
		t.Fatalf("after the commit: %d written in %d commits, %d staged", sink.count(), sink.commits, b.Len())
	}
	for i := range sink.stored {
		if w, g := fmt.Sprintf("%+v", directSink.stored[i]), fmt.Sprintf("%+v", sink.stored[i]); w != g {
			t.Errorf("snapshot %d staged %s, recorded %s", i, g, w)
		}
	}
	if err := inv.CommitBatch(context.Background(), b); err != nil || sink.commits != 1 {
		t.Fatalf("an empty batch committed: %v, %d commits", err, sink.commits)
	}
}

// A sink that cannot stage records a batch's calls as always, and a nil
// batch is no batch.
func TestNoBatchWithoutStager(t *testing.T) {
	calls := 0
	inv, sink := newTestInvoker(t, echoSpec(), echoHandler(&calls))
	ctx := context.Background()
	for _, b := range []*Batch{inv.NewBatch(), nil} {
		resp, err := inv.InvokeIn(ctx, b, "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 2})
		if err != nil || b.Len() != 0 || resp.SnapshotID() == "" {
			t.Fatalf("%v: %d staged, id %q", err, b.Len(), resp.SnapshotID())
		}
	}
	if sink.count() != 2 {
		t.Fatalf("%d snapshots recorded, want 2", sink.count())
	}
	if err := inv.CommitBatch(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if NewInvoker(NewRegistry(testSchemas), nil, nil).NewBatch() != nil {
		t.Fatal("NewBatch without a sink is not nil")
	}
}

// A batch belongs to its invoker: another invoker records as always.
func TestBatchOfAnotherInvokerIsIgnored(t *testing.T) {
	h := func(_ context.Context, c *Call) (*Output, error) {
		return &Output{Data: map[string]any{"country": "DE", "quantity": 1}}, nil
	}
	a, _ := newStagingInvoker(t, h)
	other, otherSink := newStagingInvoker(t, h)
	b := a.NewBatch()
	if _, err := other.InvokeIn(context.Background(), b, "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1}); err != nil {
		t.Fatal(err)
	}
	if otherSink.count() != 1 || b.Len() != 0 {
		t.Fatalf("%d recorded, %d staged in another invoker's batch", otherSink.count(), b.Len())
	}
}

// CommitBatch's failures: a step already recorded matches ErrStepRecorded;
// anything else is a retryable UPSTREAM_ERROR; the batch is empty after.
func TestCommitBatchFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		recorded bool
	}{
		"step recorded":         {Errorf(Conflict, "exists").WithCause(ErrStepRecorded), true},
		"step recorded wrapped": {fmt.Errorf("store: %w", ErrStepRecorded), true},
		"database down":         {errors.New("connection refused"), false},
		"not retryable":         {Errorf(InvalidArgument, "odd"), false},
		"retryable":             {Errorf(Timeout, "slow"), false},
	} {
		inv, sink := newStagingInvoker(t, func(_ context.Context, c *Call) (*Output, error) {
			return &Output{Data: map[string]any{"country": "DE", "quantity": 1}}, nil
		})
		sink.commitErr = tc.err
		b := inv.NewBatch()
		if _, err := inv.InvokeIn(context.Background(), b, "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1}); err != nil {
			t.Fatal(err)
		}
		err := inv.CommitBatch(context.Background(), b)
		var te *Error
		if !errors.As(err, &te) {
			t.Fatalf("%s: %v is not a *Error", name, err)
		}
		if errors.Is(err, ErrStepRecorded) != tc.recorded {
			t.Errorf("%s: errors.Is(%v, ErrStepRecorded) = %v", name, err, !tc.recorded)
		}
		if !tc.recorded && !te.Code.Retryable() {
			t.Errorf("%s: %v is not retryable", name, err)
		}
		if b.Len() != 0 || sink.count() != 0 {
			t.Errorf("%s: %d staged, %d written after a failed commit", name, b.Len(), sink.count())
		}
	}
}

// Len is the number of snapshots staged and not yet committed.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.steps)
}
