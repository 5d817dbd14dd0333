package audit

import (
	"context"
	"fmt"

	"github.com/cartwright-dev/cartwright/evidence"
)

// checkChain verifies the workflow's hash chain and classifies every
// snapshot of the audited run that no completed activity names.
func checkChain(ctx context.Context, r reads, ev *events, rep *Report) error {
	if rep.WorkflowID == "" {
		rep.note(Finding{Kind: NoteChainUnchecked, Detail: "the history names no workflow id and no activity names a snapshot"})
		return nil
	}
	// One read serves both: the chain's rows are the workflow's snapshots.
	c, err := r.chain(ctx, rep.WorkflowID)
	if err != nil {
		return errf("verify chain of %s: %v", rep.WorkflowID, err)
	}
	vr, snaps := c.Verify(), c.Rows
	rep.Chain = ChainResult{Checked: true, Rows: vr.Rows, OK: vr.OK}
	byID := map[string]*evidence.SnapshotRecord{}
	for _, s := range snaps {
		byID[s.SnapshotID] = s
	}
	for _, p := range vr.Problems {
		f := Finding{Kind: KindChainBroken, SnapshotID: p.SnapshotID, Detail: fmt.Sprintf("%s at chain row %d: %s", p.Kind, p.ChainSeq, p.Detail)}
		if s := byID[p.SnapshotID]; s != nil {
			f.ActivityID, f.ActivityType, f.Tool = s.ActivityID, s.ActivityType, s.Tool
		}
		rep.find(f)
	}
	named := map[string]bool{}
	for _, c := range rep.Activities {
		named[c.SnapshotID] = true
	}
	for _, s := range snaps {
		if !named[s.SnapshotID] {
			classify(rep, ev, s)
		}
	}
	return nil
}

// classify files a snapshot no completed activity names: a leftover of an
// attempt (note), another run's (note), or one the history cannot explain
// (finding extra_snapshot).
func classify(rep *Report, ev *events, s *evidence.SnapshotRecord) {
	f := Finding{ActivityID: s.ActivityID, ActivityType: s.ActivityType, Tool: s.Tool, SnapshotID: s.SnapshotID}
	if s.RunID != rep.RunID && !ev.RunIDs[s.RunID] {
		f.Kind, f.Detail = NoteOtherRun, "snapshot of run "+s.RunID
		rep.note(f)
		return
	}
	for _, a := range ev.byID(s.ActivityID) {
		if s.ActivityType != "" && a.Type != s.ActivityType {
			continue
		}
		f.EventID = a.EventID
		switch a.State {
		case stateOpen:
			f.Kind, f.Detail = NoteInFlight, fmt.Sprintf("attempt %d of an activity that has not closed", s.Attempt)
		case stateCompleted, stateRefused:
			f.Kind, f.Detail = NoteSupersededAttempt,
				fmt.Sprintf("attempt %d answered but its result never reached the history; attempt %d completed", s.Attempt, a.Attempt)
		default:
			f.Kind, f.Detail = NoteSupersededAttempt, fmt.Sprintf("attempt %d answered, but the activity failed", s.Attempt)
		}
		rep.note(f)
		return
	}
	f.Kind, f.Detail = KindExtraSnapshot, fmt.Sprintf("attempt %d of activity %s: the history never scheduled such an activity", s.Attempt, s.ActivityID)
	rep.find(f)
}
