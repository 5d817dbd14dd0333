package audit

import (
	"fmt"
	"io"
	"strings"
)

// Finding kinds: each one makes the audit fail (exit 1).
const (
	// KindNondeterminism: replaying the history with the registered
	// workflow code produced different commands (or a different result).
	KindNondeterminism = "nondeterminism"
	// KindReplayFailed: the replay failed for another reason (the workflow
	// code panicked, or the history could not be processed).
	KindReplayFailed = "replay_failed"
	// KindUnregisteredType: the run's workflow type is none this build
	// registers, so no cartwright code ran it (audit/replay.go).
	KindUnregisteredType = "unregistered_workflow_type"
	// KindMissingSnapshot: a completed activity's envelope names no
	// snapshot, or one the store does not have.
	KindMissingSnapshot = "missing_snapshot"
	// KindHashMismatch: the canonical hash of the data in the history
	// differs from the snapshot's output hash, from the hash of the
	// snapshot's stored output, or from the hash the envelope states.
	KindHashMismatch = "hash_mismatch"
	// KindSnapshotMismatch: the snapshot exists but belongs to another
	// workflow, run, activity or tool than the history says.
	KindSnapshotMismatch = "snapshot_mismatch"
	// KindChainBroken: evidence.Verify found the workflow's hash chain
	// edited, broken, or with rows missing.
	KindChainBroken = "chain_broken"
	// KindExtraSnapshot: a snapshot of the audited run names an activity
	// the history never scheduled.
	KindExtraSnapshot = "extra_snapshot"
	// KindArchiveAltered: the archived history no longer decrypts or no
	// longer matches the hash taken when it was archived; nothing else is
	// checked, since the history cannot be trusted.
	KindArchiveAltered = "archive_altered"
	// KindUndecodableResult: a completed activity's result could not be
	// decoded with the data converter, so its evidence cannot be checked.
	KindUndecodableResult = "undecodable_result"
	// KindMissingPayloadKey: payloads of the history are under a key id
	// the audit's key ring does not hold. It is the only finding then:
	// nothing else could be read, so nothing else was checked (and the
	// audit could not run: ExitCannotRun).
	KindMissingPayloadKey = "missing_payload_key"
)

// Note kinds: facts worth showing that are not findings.
const (
	// NoteSupersededAttempt: a snapshot left by an attempt whose result
	// never reached the history (the attempt failed or timed out after the
	// tool answered, and a later attempt completed or the activity failed).
	// Evidence is written before the activity returns, so this is expected.
	NoteSupersededAttempt = "superseded_attempt"
	// NoteInFlight: a snapshot of an activity that has not closed yet.
	NoteInFlight = "in_flight"
	// NoteOtherRun: a snapshot of another run of the same workflow id (the
	// chain spans every run); audit that run to check it.
	NoteOtherRun = "other_run"
	// NoteNoEnvelope: a completed activity whose result has no envelope,
	// i.e. it is not a tool call and has no evidence to check.
	NoteNoEnvelope = "no_envelope"
	// NoteChainUnchecked: the workflow id is unknown (an old exported
	// history whose activities name no snapshot): no chain to verify.
	NoteChainUnchecked = "chain_unchecked"
)

// Finding is one defect, or (in Notes) one remark, naming what it is about.
type Finding struct {
	Kind         string `json:"kind"`
	ActivityID   string `json:"activity_id,omitempty"`
	ActivityType string `json:"activity_type,omitempty"`
	Tool         string `json:"tool,omitempty"`
	SnapshotID   string `json:"snapshot_id,omitempty"`
	// EventID is the history event the finding is about, when there is one.
	EventID int64  `json:"event_id,omitempty"`
	Detail  string `json:"detail"`
}

func (f Finding) String() string {
	var who []string
	if f.ActivityID != "" {
		who = append(who, "activity "+f.ActivityID)
	}
	if f.ActivityType != "" {
		who = append(who, f.ActivityType)
	}
	if f.Tool != "" {
		who = append(who, f.Tool)
	}
	if f.SnapshotID != "" {
		who = append(who, f.SnapshotID)
	}
	if len(who) == 0 {
		return f.Kind + ": " + f.Detail
	}
	return fmt.Sprintf("%s: %s: %s", f.Kind, strings.Join(who, " "), f.Detail)
}

// ActivityCheck is the evidence check of one completed tool activity.
type ActivityCheck struct {
	ActivityID   string `json:"activity_id"`
	ActivityType string `json:"activity_type"`
	// Local is true for a local activity (its result is in a marker).
	Local bool `json:"local,omitempty"`
	// Attempt is the attempt whose result the history holds.
	Attempt    int32  `json:"attempt"`
	EventID    int64  `json:"event_id"`
	Tool       string `json:"tool"`
	SnapshotID string `json:"snapshot_id"`
	// Hash is the canonical hash of the envelope's data (of its error
	// object for a refusal), recomputed.
	Hash string `json:"hash"`
	// Refusal: the tool refused (Code); its evidence is the refusal.
	Refusal bool   `json:"refusal,omitempty"`
	Code    string `json:"code,omitempty"`
	OK      bool   `json:"ok"`
}

// ReplayResult is the outcome of replaying the history.
type ReplayResult struct {
	// Ran is false when the history failed its own check and was not replayed.
	Ran   bool   `json:"ran"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// ChainResult is the outcome of evidence.Verify on the workflow's chain.
type ChainResult struct {
	Checked bool `json:"checked"`
	Rows    int  `json:"rows"`
	OK      bool `json:"ok"`
}

// Report is the audit of one workflow run. Clean is true when Findings is
// empty; Notes never affect it.
type Report struct {
	WorkflowID   string `json:"workflow_id"`
	RunID        string `json:"run_id"`
	WorkflowType string `json:"workflow_type"`
	// Status is the run's close status (Completed, Failed, …) or Running.
	Status string `json:"status"`
	// Source says where the history came from.
	Source     string          `json:"source"`
	Events     int             `json:"events"`
	Replay     ReplayResult    `json:"replay"`
	Chain      ChainResult     `json:"chain"`
	Activities []ActivityCheck `json:"activities"`
	Findings   []Finding       `json:"findings"`
	Notes      []Finding       `json:"notes,omitempty"`
	Clean      bool            `json:"clean"`
}

// History sources of a Report.
const (
	SourceServer  = "server"
	SourceArchive = "archive"
	SourceGiven   = "history" // handed in by the caller, e.g. read from a file
)

func (r *Report) find(f Finding) { r.Findings = append(r.Findings, f) }

// lacksKey: the history could not be read for want of a payload key.
func (r *Report) lacksKey() bool {
	for _, f := range r.Findings {
		if f.Kind == KindMissingPayloadKey {
			return true
		}
	}
	return false
}
func (r *Report) note(f Finding) { r.Notes = append(r.Notes, f) }

// WriteText prints the report for people: one line per activity checked,
// finding and note.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	verdict := "CLEAN"
	if !r.Clean {
		verdict = fmt.Sprintf("%d FINDING(S)", len(r.Findings))
	}
	fmt.Fprintf(&b, "audit %s run %s (%s, %s, %d events from %s): %s\n",
		r.WorkflowID, r.RunID, r.WorkflowType, r.Status, r.Events, r.Source, verdict)
	replay := "replay: same decisions"
	switch {
	case !r.Replay.Ran:
		replay = "replay: not run"
	case !r.Replay.OK:
		replay = "replay: FAILED"
	}
	fmt.Fprintf(&b, "  %s\n", replay)
	if r.Chain.Checked {
		fmt.Fprintf(&b, "  hash chain: %d rows, ok=%v\n", r.Chain.Rows, r.Chain.OK)
	}
	for _, a := range r.Activities {
		mark := "ok"
		if !a.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "  activity %-4s %-24s %-34s %s %s\n", a.ActivityID, a.ActivityType, a.Tool, a.SnapshotID, mark)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  FINDING %s\n", f)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
