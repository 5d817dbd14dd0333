package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// CallContext locates a tool call in Temporal: the activity that ran it.
// Outside an activity (tests, the CLI) the fields are empty.
type CallContext struct {
	WorkflowID   string `json:"workflow_id"`
	RunID        string `json:"run_id"`
	ActivityID   string `json:"activity_id"`
	ActivityType string `json:"activity_type"`
	Attempt      int32  `json:"attempt"`
	// WorkflowType is the type of the calling run, as the activity's info
	// says (the evidence row records it, signed).
	WorkflowType string `json:"workflow_type,omitempty"`
}

// Snapshot is what the invoker hands to the evidence store after a tool call
// succeeded: everything docs/evidence.md#snapshot lists. Output is the
// sanitised data the envelope carries; RawOutput is set only when sanitising
// changed something, and the store must keep it encrypted.
type Snapshot struct {
	Tool           string
	ToolVersion    string
	Build          string
	Call           CallContext
	RequestID      string
	CorrelationID  string
	UserID         string
	InputDigest    string
	Output         json.RawMessage
	OutputHash     string
	RawOutput      json.RawMessage
	RulesetVersion string
	TTL            time.Duration
	Status         Status
	CreatedAt      time.Time
	// TraceID is the W3C trace id of the call's span ("" untraced): an
	// operator's way from a trace to its evidence and back.
	TraceID string
}

// EvidenceSink is the evidence store as the invoker sees it, one snapshot
// per step (docs/evidence.md#one-snapshot-per-step). The invoker records
// after output validation and sanitising and puts the snapshot id into the
// envelope; an error fails the call (evidence first: no evidence, no
// answer).
//
// RecordStep writes s, or answers with the snapshot the step already holds.
// StageStep does everything RecordStep does but the I/O, and CommitSteps
// writes staged steps in one round trip and one transaction, all or
// nothing, failing to match ErrStepRecorded when a step already holds a
// snapshot (docs/evidence.md#staged-batches). A sink that writes every
// snapshot at once embeds Unstaged.
type EvidenceSink interface {
	RecordStep(ctx context.Context, s Snapshot) (Recorded, error)
	StageStep(s Snapshot) (Staged, error)
	CommitSteps(ctx context.Context, steps []Staged) error
}

// ErrNotStaged is what StageStep answers when the sink writes every
// snapshot at once: a batch then records the step through RecordStep.
var ErrNotStaged = errors.New("toolkit: this evidence sink does not stage steps")

// Unstaged is the staging half of an EvidenceSink that writes every
// snapshot at once: StageStep answers ErrNotStaged, and there is never
// anything to commit.
type Unstaged struct{}

// StageStep implements EvidenceSink: nothing is ever staged.
func (Unstaged) StageStep(Snapshot) (Staged, error) { return nil, ErrNotStaged }

// CommitSteps implements EvidenceSink: there is nothing to write.
func (Unstaged) CommitSteps(context.Context, []Staged) error { return nil }

// DiscardEvidence is a sink for tools whose spec does not require evidence
// and for unit tests of tool logic. It stores nothing and returns no id.
type DiscardEvidence struct{ Unstaged }

// RecordStep implements EvidenceSink.
func (DiscardEvidence) RecordStep(context.Context, Snapshot) (Recorded, error) {
	return Recorded{}, nil
}

// Recorded is the snapshot a step's answer is evidenced by. Reused says
// the step already held it (a retried attempt, a local activity run again
// after a lost workflow task): then Output, OutputHash, Status,
// RulesetVersion and CreatedAt are the stored answer's, which the caller
// must answer with, since that is what the evidence proves.
type Recorded struct {
	SnapshotID     string
	Reused         bool
	Output         json.RawMessage
	OutputHash     string
	Status         Status
	RulesetVersion string
	CreatedAt      time.Time
}
