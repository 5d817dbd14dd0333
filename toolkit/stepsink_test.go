package toolkit

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// stepSink keeps the first snapshot of each step (by activity id) and
// answers later ones with it, as the evidence store does.
type stepSink struct {
	Unstaged
	steps map[string]Recorded
	rows  int
}

func (s *stepSink) RecordStep(_ context.Context, snap Snapshot) (Recorded, error) {
	if rec, ok := s.steps[snap.Call.ActivityID]; ok {
		rec.Reused = true
		return rec, nil
	}
	s.rows++
	rec := Recorded{SnapshotID: "ev_step" + snap.Call.ActivityID, Output: snap.Output, OutputHash: snap.OutputHash,
		Status: snap.Status, RulesetVersion: snap.RulesetVersion, CreatedAt: snap.CreatedAt}
	s.steps[snap.Call.ActivityID] = rec
	return rec, nil
}

// A step run twice (a local activity re-run after a lost workflow task)
// whose tool answers differently the second time answers with the first,
// evidenced answer: the envelope and its snapshot agree.
func TestStepRunTwiceAnswersWithItsEvidence(t *testing.T) {
	reg := NewRegistry(testSchemas)
	n := 0
	err := reg.Register(echoSpec(), func(_ context.Context, c *Call) (*Output, error) {
		n++
		var in map[string]any
		if err := c.Bind(&in); err != nil {
			return nil, err
		}
		in["note"] = time.Duration(n).String() // a new answer each run
		return &Output{Data: in}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sink := &stepSink{steps: map[string]Recorded{}}
	inv := NewInvoker(reg, sink, nil)
	ctx := WithCall(context.Background(), CallContext{WorkflowID: "wf", RunID: "run", ActivityID: "3", ActivityType: "CallTool", Attempt: 1})
	in := map[string]any{"country": "DE", "quantity": 2}
	first, err := inv.Invoke(ctx, "test.echo", validRequest(), in)
	if err != nil {
		t.Fatal(err)
	}
	second, err := inv.Invoke(ctx, "test.echo", validRequest(), in)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || sink.rows != 1 {
		t.Fatalf("tool ran %d times, %d snapshots; want 2 runs, 1 snapshot", n, sink.rows)
	}
	var a, b map[string]any
	_ = json.Unmarshal(first.Data, &a)
	_ = json.Unmarshal(second.Data, &b)
	if a["note"] != "1ns" || b["note"] != "1ns" {
		t.Fatalf("second run answered %v, want the evidenced %v", b, a)
	}
	hash, _ := CanonicalHash(second.Data)
	if second.SnapshotID() != first.SnapshotID() || second.Evidence.Sources[0].Hash != hash || second.Meta.OutputFingerprint != hash {
		t.Fatalf("second envelope %+v does not match its snapshot (hash %s)", second.Evidence, hash)
	}
}
