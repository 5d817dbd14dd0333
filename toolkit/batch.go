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

// Staged is one snapshot a StepStager built without writing it yet: its
// id is the one the row gets when the batch is committed.
type Staged interface {
	SnapshotID() string
}

// StepStager is a StepRecorder that can also stage steps and write several
// of them together (docs/evidence.md#staged-batches). StageStep does
// everything RecordStep does but the I/O; CommitSteps writes the staged
// steps in one round trip and one transaction, all or nothing, and fails
// matching ErrStepRecorded when a step already holds a snapshot.
type StepStager interface {
	StepRecorder
	StageStep(s Snapshot) (Staged, error)
	CommitSteps(ctx context.Context, steps []Staged) error
}

// Batch collects the evidence snapshots of several calls one activity
// makes, to write them together. It is safe for concurrent use.
type Batch struct {
	inv    *Invoker
	stager StepStager
	mu     sync.Mutex
	steps  []Staged
}

// NewBatch returns a batch, or nil when the invoker's sink cannot stage
// (then Invoke records as always).
func (inv *Invoker) NewBatch() *Batch {
	st, ok := inv.sink.(StepStager)
	if !ok {
		return nil
	}
	return &Batch{inv: inv, stager: st}
}

type batchKey struct{}

// WithBatch returns ctx under which Invoke stages the call's snapshot
// (answers and refusals alike) in b instead of writing it. A nil b returns
// ctx unchanged.
func WithBatch(ctx context.Context, b *Batch) context.Context {
	if b == nil {
		return ctx
	}
	return context.WithValue(ctx, batchKey{}, b)
}

// batchFor is the batch of ctx when it belongs to inv (a batch of another
// invoker's sink is not this one's to fill).
func (inv *Invoker) batchFor(ctx context.Context) *Batch {
	b, _ := ctx.Value(batchKey{}).(*Batch)
	if b == nil || b.inv != inv {
		return nil
	}
	return b
}

// stage builds snap's row in b. The call's envelope is the one a first,
// immediately recorded call gets: the snapshot id the row will have.
func (b *Batch) stage(snap Snapshot) (Recorded, error) {
	st, err := b.stager.StageStep(snap)
	if err != nil {
		return Recorded{}, err
	}
	b.mu.Lock()
	b.steps = append(b.steps, st)
	b.mu.Unlock()
	return Recorded{SnapshotID: st.SnapshotID(), OutputHash: snap.OutputHash}, nil
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
	b.steps = nil
	b.mu.Unlock()
	if len(steps) == 0 {
		return nil
	}
	err := b.stager.CommitSteps(ctx, steps)
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
	b.steps = nil
	return steps
}
