package toolkit

import (
	"context"
	"encoding/json"
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

// EvidenceSink stores snapshots. The invoker calls Record after output
// validation and sanitising and puts the returned id into the envelope; an
// error fails the call (evidence first: no evidence, no answer).
type EvidenceSink interface {
	Record(ctx context.Context, s Snapshot) (snapshotID string, err error)
}

// DiscardEvidence is a sink for tools whose spec does not require evidence
// and for unit tests of tool logic. It stores nothing and returns no id.
type DiscardEvidence struct{}

// Record implements EvidenceSink.
func (DiscardEvidence) Record(context.Context, Snapshot) (string, error) { return "", nil }

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

// StepRecorder is an EvidenceSink that keeps one snapshot per step (the
// evidence store): the invoker prefers it, and answers a step that already
// has a snapshot with that snapshot's answer.
type StepRecorder interface {
	EvidenceSink
	RecordStep(ctx context.Context, s Snapshot) (Recorded, error)
}
