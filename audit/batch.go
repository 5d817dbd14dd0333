package audit

import (
	"context"
	"sync"

	"github.com/cartwright-dev/cartwright/evidence"
)

// batchReads answers the reads of a batch of runs from a few statements
// made once for all of their workflows: their chains (every snapshot of
// each, so also every snapshot their envelopes should name), the chains'
// heads, their draft_orders rows and those rows' backing. Anything outside
// the batch — a snapshot or a draft row of another workflow, which a
// tampered envelope may name — is read directly, as Audit reads it, so the
// findings are the same (docs/performance.md#audit-rate).
//
// The statements run once, in the background, from start; a read waits
// for them. They run before the runs' histories are fetched: a run still
// open may have written more since. A snapshot or a draft row that a
// batch's workflow names and the batch lacks says so, and from then on
// that workflow's chain and rows are read directly too, as Audit reads
// them after the history (TestAuditManyReadsWhatAnOpenRunWroteSince).
type batchReads struct {
	direct directReads
	ready  chan struct{}
	err    error // set before ready closes

	inBatch map[string]bool // the batch's workflow ids
	snaps   map[string]*evidence.SnapshotRecord
	chains  map[string]*evidence.Chain
	drafts  map[string]*draftRow
	rows    map[string][]evidence.DraftRowBacking

	mu    sync.Mutex
	moved map[string]bool // batch workflows that wrote evidence since it was read
}

// startBatch begins reading the evidence of workflowIDs.
func startBatch(ctx context.Context, store *evidence.Store, workflowIDs []string) *batchReads {
	b := &batchReads{direct: directReads{store}, ready: make(chan struct{}), inBatch: make(map[string]bool, len(workflowIDs))}
	for _, id := range workflowIDs {
		b.inBatch[id] = true
	}
	go func() {
		defer close(b.ready)
		b.err = b.load(ctx, workflowIDs)
	}()
	return b
}

func (b *batchReads) load(ctx context.Context, workflowIDs []string) error {
	chains, err := b.direct.store.ReadChains(ctx, workflowIDs)
	if err != nil {
		return errf("read the evidence chains of %d workflows: %v", len(workflowIDs), err)
	}
	b.chains, b.snaps = chains, map[string]*evidence.SnapshotRecord{}
	for _, c := range chains {
		for _, s := range c.Rows {
			b.snaps[s.SnapshotID] = s
		}
	}
	rows, err := b.direct.store.Pool().Query(ctx, `SELECT draft_order_id, `+draftRowColumns+` FROM draft_orders
		WHERE workflow_id = ANY($1)`, workflowIDs)
	if err != nil {
		return errf("read the draft rows of %d workflows: %v", len(workflowIDs), err)
	}
	b.drafts = map[string]*draftRow{}
	for rows.Next() {
		var r draftRow
		var id string
		if err := rows.Scan(&id, &r.status, &r.quoteHash, &r.currency, &r.total, &r.workflowID); err != nil {
			rows.Close()
			return errf("read the draft rows of %d workflows: %v", len(workflowIDs), err)
		}
		b.drafts[id] = &r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return errf("read the draft rows of %d workflows: %v", len(workflowIDs), err)
	}
	if b.rows, err = b.direct.store.DraftRowsOfMany(ctx, workflowIDs); err != nil {
		return errf("read the draft rows of %d workflows: %v", len(workflowIDs), err)
	}
	return nil
}

// wait blocks until the batch is read.
func (b *batchReads) wait(ctx context.Context) error {
	select {
	case <-b.ready:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *batchReads) snapshot(ctx context.Context, id string) (*evidence.SnapshotRecord, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	if s, ok := b.snaps[id]; ok {
		return s, nil
	}
	s, err := b.direct.snapshot(ctx, id)
	if err == nil {
		b.sawNew(s.ChainKey)
	}
	return s, err
}

func (b *batchReads) chain(ctx context.Context, workflowID string) (*evidence.Chain, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	if c, ok := b.chains[workflowID]; ok && !b.hasMoved(workflowID) {
		return c, nil
	}
	return b.direct.chain(ctx, workflowID)
}

func (b *batchReads) draftRow(ctx context.Context, draftOrderID string) (*draftRow, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	if r, ok := b.drafts[draftOrderID]; ok {
		return r, nil
	}
	r, err := b.direct.draftRow(ctx, draftOrderID)
	if err == nil && r != nil {
		b.sawNew(r.workflowID)
	}
	return r, err
}

func (b *batchReads) workflowRows(ctx context.Context, workflowID string) ([]evidence.DraftRowBacking, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	if b.inBatch[workflowID] && !b.hasMoved(workflowID) {
		return b.rows[workflowID], nil
	}
	return b.direct.workflowRows(ctx, workflowID)
}

// sawNew notes evidence of workflowID the batch lacks: written since the
// batch was read, if workflowID is one of the batch's.
func (b *batchReads) sawNew(workflowID string) {
	if !b.inBatch[workflowID] {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.moved == nil {
		b.moved = map[string]bool{}
	}
	b.moved[workflowID] = true
}

func (b *batchReads) hasMoved(workflowID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.moved[workflowID]
}
