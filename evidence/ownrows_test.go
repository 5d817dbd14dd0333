package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestReadWrittenOwnRowsAndOthers: the store that wrote a row (one by
// one, or in a staged batch) answers it from memory, with the content it
// wrote, without asking the database; another worker's store
// reads it from the table and checks its signature with the writer's
// public keys; a store that does not know the writer's key refuses it
// (bad_signature), as it refuses a row it cannot vouch for.
func TestReadWrittenOwnRowsAndOthers(t *testing.T) {
	writer, pool := newTestStore(t)
	ctx := ctxT(t)
	const wf = "wf-read-written"
	one, err := writer.Record(ctx, snapshot(t, wf, 1, map[string]any{"n": 1}))
	if err != nil {
		t.Fatal(err)
	}
	st, err := writer.StageStep(snapshot(t, wf, 2, map[string]any{"n": 2}))
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.CommitSteps(ctx, []toolkit.Staged{st}); err != nil {
		t.Fatal(err)
	}
	two := st.SnapshotID()
	output := func(got map[string]*SnapshotRecord, id string) string {
		r := got[id]
		if r == nil {
			return "<none>"
		}
		var v any
		_ = json.Unmarshal(r.Output, &v)
		return fmt.Sprint(v)
	}

	// Another worker, with the writer's public keys: from the table, checked.
	worker := func() *Store {
		s, err := NewStore(pool, writer.cipher, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.SignWith(testSigner(t, WriterWorker))
		return s
	}
	other := worker()
	other.VerifyWith(RowKeysOf(writer.Signer()))
	got, err := other.ReadWritten(ctx, []string{one, two, "ev_none"})
	if err != nil || output(got, one) != "map[n:1]" || output(got, two) != "map[n:2]" || len(got) != 2 {
		t.Fatalf("another worker read %v (%v), want both rows and nothing for an unknown id", got, err)
	}
	// A store that does not know the writer's key cannot vouch for it.
	stranger := worker()
	var forged *ForgedRowError
	if _, err := stranger.ReadWritten(ctx, []string{one}); !errors.As(err, &forged) || forged.Kind != ProblemBadSignature || forged.SnapshotID != one {
		t.Fatalf("a store without the writer's key: %v, want a bad_signature ForgedRowError", err)
	}

	// The writer itself answers from memory: with the database out of
	// reach (a cancelled context) it still has both rows; the other worker
	// must ask the table.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := writer.ReadWritten(gone, []string{one, two}); err != nil || output(got, one) != "map[n:1]" || output(got, two) != "map[n:2]" {
		t.Fatalf("the writer read %v (%v), want both rows from memory", got, err)
	}
	if _, err := other.ReadWritten(gone, []string{one}); err == nil {
		t.Fatal("another worker read a row without the database")
	}
}

// TestOwnRowsForgetTheOldest: the memory keeps the last rows only.
func TestOwnRowsForgetTheOldest(t *testing.T) {
	o := newOwnRows(3)
	for i := 1; i <= 4; i++ {
		o.add(&SnapshotRecord{SnapshotID: fmt.Sprint("ev_", i), rawCiphertext: []byte("x")})
	}
	if _, ok := o.get("ev_1"); ok {
		t.Fatal("the oldest row is still remembered")
	}
	for i := 2; i <= 4; i++ {
		r, ok := o.get(fmt.Sprint("ev_", i))
		if !ok || r.rawCiphertext != nil {
			t.Fatalf("row %d: remembered %v, ciphertext %q; want it, without its ciphertext", i, ok, r.rawCiphertext)
		}
	}
}
