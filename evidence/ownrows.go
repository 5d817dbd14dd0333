package evidence

import (
	"context"
	"fmt"
	"sync"
)

// ownRowsKept bounds the rows a store remembers having written: a few
// hundred draft orders' quote steps (four or five rows each, a few KiB of
// output apiece), a couple of MiB.
const ownRowsKept = 1024

// ownRows remembers the last rows this store wrote itself, oldest
// forgotten first. A draft order's write reads the snapshots its quote
// step wrote moments before, in the same worker (the run's workflow tasks
// stay on the worker that holds it in its cache), so it takes them from
// memory: no round trip, and no signature to check on a row this very
// process signed (docs/performance.md#the-writes-evidence-from-memory-or-in-one-read).
type ownRows struct {
	mu   sync.Mutex
	ring []string
	next int
	byID map[string]*SnapshotRecord
}

func newOwnRows(n int) *ownRows {
	return &ownRows{ring: make([]string, n), byID: make(map[string]*SnapshotRecord, n)}
}

// add remembers r (written and placed in its chain).
func (o *ownRows) add(r *SnapshotRecord) {
	keep := *r
	keep.rawCiphertext, keep.rawNonce = nil, nil // only the auditor opens it, from the store
	o.mu.Lock()
	defer o.mu.Unlock()
	if old := o.ring[o.next]; old != "" {
		delete(o.byID, old)
	}
	o.ring[o.next], o.byID[r.SnapshotID] = r.SnapshotID, &keep
	o.next = (o.next + 1) % len(o.ring)
}

func (o *ownRows) get(id string) (*SnapshotRecord, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.byID[id]
	return r, ok
}

// ForgedRowError is ReadWritten's refusal of a stored row no cartwright
// worker vouches for (CheckWrittenByWorker's kind and detail).
type ForgedRowError struct {
	SnapshotID, Kind, Detail string
}

func (e *ForgedRowError) Error() string {
	return fmt.Sprintf("evidence snapshot %s was not written by a cartwright worker (%s: %s)", e.SnapshotID, e.Kind, e.Detail)
}

// ReadWritten returns the snapshots of ids that exist, by id, each one a
// cartwright worker wrote: this store's own recent rows from memory, the
// others from the store in one round trip, each checked with
// CheckWrittenByWorker; a row that fails the check is a *ForgedRowError.
// What a write rests on is read through it (docs/quote-seals.md#what-the-write-checks).
func (s *Store) ReadWritten(ctx context.Context, ids []string) (map[string]*SnapshotRecord, error) {
	got := make(map[string]*SnapshotRecord, len(ids))
	var stored []string
	for _, id := range ids {
		if r, ok := s.own.get(id); ok {
			got[id] = r
		} else {
			stored = append(stored, id)
		}
	}
	if len(stored) == 0 {
		return got, nil
	}
	read, err := s.GetMany(ctx, stored)
	if err != nil {
		return nil, err
	}
	for id, r := range read {
		kind, detail, err := s.CheckWrittenByWorker(ctx, r)
		if err != nil {
			return nil, err
		}
		if kind != "" {
			return nil, &ForgedRowError{SnapshotID: id, Kind: kind, Detail: detail}
		}
		got[id] = r
	}
	return got, nil
}
