package audit

import (
	"context"
	"fmt"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// checkChain verifies the workflow's hash chain and classifies every
// snapshot of the audited run that no completed activity names.
func checkChain(ctx context.Context, d Deps, ev *events, rep *Report) error {
	if rep.WorkflowID == "" {
		rep.note(Finding{Kind: NoteChainUnchecked, Detail: "the history names no workflow id and no activity names a snapshot"})
		return nil
	}
	vr, err := d.Evidence.Verify(ctx, rep.WorkflowID)
	if err != nil {
		return errf("verify chain of %s: %v", rep.WorkflowID, err)
	}
	rep.Chain = ChainResult{Checked: true, Rows: vr.Rows, OK: vr.OK}
	snaps, err := d.Evidence.SnapshotsForWorkflow(ctx, rep.WorkflowID)
	if err != nil {
		return errf("list snapshots of %s: %v", rep.WorkflowID, err)
	}
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
	checkFailedRefusals(rep, ev, snaps, named)
	for _, s := range snaps {
		if !named[s.SnapshotID] {
			classify(rep, ev, s)
		}
	}
	return nil
}

// checkFailedRefusals checks every activity that failed with a refusal
// (older runs' per-tool activities) against the refusal's snapshot: the
// snapshot of that activity holding the same error object. A refusal
// nothing evidences is the finding missing_snapshot.
func checkFailedRefusals(rep *Report, ev *events, snaps []*evidence.SnapshotRecord, named map[string]bool) {
	for _, a := range ev.Activities {
		if a.RefusalCode == "" {
			continue
		}
		hash, err := toolkit.CanonicalHash(a.Refusal)
		c := ActivityCheck{ActivityID: a.ID, ActivityType: a.Type, Attempt: a.Attempt, EventID: a.EventID,
			Hash: hash, Refusal: true, Code: a.RefusalCode}
		f := Finding{ActivityID: a.ID, ActivityType: a.Type, EventID: a.EventID}
		var match, other *evidence.SnapshotRecord
		for _, s := range snaps {
			if s.ActivityID != a.ID || (s.RunID != rep.RunID && !ev.RunIDs[s.RunID]) || s.Status != string(toolkit.StatusError) {
				continue
			}
			if err == nil && s.OutputHash == hash {
				match = s
			} else {
				other = s
			}
		}
		switch {
		case match != nil:
			c.Tool, c.SnapshotID, c.OK = match.Tool, match.SnapshotID, true
			named[match.SnapshotID] = true
		case other != nil:
			f.Kind, f.SnapshotID, f.Tool = KindHashMismatch, other.SnapshotID, other.Tool
			f.Detail = fmt.Sprintf("the refusal (%s) in the history hashes to %s, its snapshot's output_hash is %s", a.RefusalCode, hash, other.OutputHash)
			named[other.SnapshotID] = true
			rep.find(f)
		default:
			f.Kind, f.Detail = KindMissingSnapshot, fmt.Sprintf("the activity was refused (%s) and no evidence snapshot holds the refusal", a.RefusalCode)
			rep.find(f)
		}
		rep.Activities = append(rep.Activities, c)
	}
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
		case stateCompleted:
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
