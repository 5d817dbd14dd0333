package toolkit

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"
)

// ErrStepRecorded is what CommitBatch's error matches (errors.Is) when a
// staged step already holds a snapshot (docs/evidence.md#one-snapshot-per-step):
// nothing of the batch was written, and the caller makes the calls again
// without a batch, so each step adopts its stored answer.
var ErrStepRecorded = errors.New("toolkit: a staged step already holds an evidence snapshot")

// Staged is one snapshot an EvidenceSink staged without writing it yet:
// its id is the one the row gets when the batch is committed.
type Staged interface {
	SnapshotID() string
}

// Batch collects the evidence snapshots of several calls one activity
// makes, to write them together (docs/evidence.md#staged-batches). The
// caller passes it to InvokeIn for each call and commits it with
// CommitBatch. It is safe for concurrent use.
type Batch struct {
	inv   *Invoker
	mu    sync.Mutex
	steps []Staged
	// snaps are the staged snapshots by id: a later call of the same batch
	// reads them before they are written (StagedSnapshot).
	snaps map[string]Snapshot
}

// NewBatch returns a batch, or nil when the invoker has no sink (a nil
// batch records every call at once).
func (inv *Invoker) NewBatch() *Batch {
	if inv.sink == nil {
		return nil
	}
	return &Batch{inv: inv}
}

// InvokeIn is Invoke staging the call's snapshot (answers and refusals
// alike) in b instead of writing it. A nil b, or a batch of another
// invoker (whose sink is not this one's to fill), records at once.
func (inv *Invoker) InvokeIn(ctx context.Context, b *Batch, name string, req Request, input any) (*Response, error) {
	if b != nil && b.inv != inv {
		b = nil
	}
	return inv.invoke(ctx, b, name, req, input)
}

// stage builds snap's row in b. The call's envelope is the one a first,
// immediately recorded call gets: the snapshot id the row will have. A
// sink that does not stage records the step at once.
func (b *Batch) stage(ctx context.Context, snap Snapshot) (Recorded, error) {
	st, err := b.inv.sink.StageStep(snap)
	if errors.Is(err, ErrNotStaged) {
		return b.inv.sink.RecordStep(ctx, snap)
	}
	if err != nil {
		return Recorded{}, err
	}
	b.mu.Lock()
	b.steps = append(b.steps, st)
	if b.snaps == nil {
		b.snaps = map[string]Snapshot{}
	}
	b.snaps[st.SnapshotID()] = snap
	b.mu.Unlock()
	return Recorded{SnapshotID: st.SnapshotID(), OutputHash: snap.OutputHash}, nil
}

// batchKey carries the batch a call is staged in to its handler.
type batchKey struct{}

// StagedSnapshot is the snapshot id staged, not yet written, by an earlier
// call of the batch the running handler's call belongs to: a step that
// rests on the answers of its own batch (checkout.compute_total) reads
// them here, and the rest from the store.
func StagedSnapshot(ctx context.Context, id string) (Snapshot, bool) {
	b, _ := ctx.Value(batchKey{}).(*Batch)
	if b == nil {
		return Snapshot{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.snaps[id]
	return s, ok
}

// CommitBatch writes every staged snapshot in one round trip and one
// transaction (docs/evidence.md#staged-batches). If any staged step already
// has a snapshot (a local activity run again after a lost workflow task), it
// writes nothing and returns an error matching errors.Is(err,
// ErrStepRecorded); the caller then makes the calls again without a batch,
// so each step adopts its stored answer. Any other failure is a retryable
// UPSTREAM_ERROR. Committing an empty or nil batch is a no-op. The batch is
// empty afterwards, whatever the outcome: an envelope built on a staged
// snapshot id stands only if its commit succeeded.
func (inv *Invoker) CommitBatch(ctx context.Context, b *Batch) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	steps := b.steps
	b.steps, b.snaps = nil, nil
	b.mu.Unlock()
	if len(steps) == 0 {
		return nil
	}
	err := inv.sink.CommitSteps(ctx, steps)
	if err == nil {
		inv.log.Debug("evidence batch committed", zap.Int("snapshots", len(steps)))
		return nil
	}
	if errors.Is(err, ErrStepRecorded) {
		inv.log.Info("evidence batch not written: a step already holds a snapshot", zap.Int("snapshots", len(steps)))
		var te *Error
		if errors.As(err, &te) {
			return te
		}
		return Errorf(Conflict, "a staged step already holds an evidence snapshot").WithCause(err)
	}
	var te *Error
	if !errors.As(err, &te) || !te.Code.Retryable() {
		te = Errorf(UpstreamError, "store evidence batch of %d snapshots: %v", len(steps), err).WithCause(err)
	}
	inv.log.Warn("evidence batch not written", zap.Int("snapshots", len(steps)), zap.String("error_code", string(te.Code)))
	return te
}

// Take returns the staged snapshots and empties the batch, for a caller
// that writes them itself together with something else (the MCP
// gateway's direct reads: docs/evidence.md#direct-calls).
func (b *Batch) Take() []Staged {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	steps := b.steps
	b.steps, b.snaps = nil, nil
	return steps
}
