package workflows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// maxSignalBytes bounds a signal payload we are willing to decode; a signal
// is a few short fields.
const maxSignalBytes = 16 << 10

// maxRejectedKept bounds the rejected-signal list in workflow state, so a
// flood of bad signals cannot grow the status query without limit.
const maxRejectedKept = 100

// Stable reasons a signal is rejected, counted and shown in status queries.
const (
	RejectMalformed         = "malformed"
	RejectNotWaiting        = "not_waiting"
	RejectStaleQuoteHash    = "stale_quote_hash"
	RejectStaleApproval     = "stale_approval_id"
	RejectDuplicateApproval = "duplicate_approval_id"
	RejectUnknownApprover   = "unknown_approver"
	RejectApproverForbidden = "approver_not_allowed"
	RejectVerifyFailed      = "approver_check_failed"
	// RejectUnauthenticated: the decision carries no valid seal, so its
	// author is unknown (docs/approvals.md#sealed-decisions).
	RejectUnauthenticated = "unauthenticated_decision"
)

// rejectionCodes map the stable rejection reasons into the closed set: a
// signal's refusal as the client reports it, and an update's refusal as
// the update answers it.
var rejectionCodes = map[string]toolkit.Code{
	RejectMalformed:         toolkit.InvalidArgument,
	RejectNotWaiting:        toolkit.Conflict,
	RejectStaleQuoteHash:    toolkit.Conflict,
	RejectStaleApproval:     toolkit.Conflict,
	RejectDuplicateApproval: toolkit.Conflict,
	RejectUnknownApprover:   toolkit.Forbidden,
	RejectApproverForbidden: toolkit.Forbidden,
	RejectVerifyFailed:      toolkit.UpstreamError,
	RejectUnauthenticated:   toolkit.Unauthorized,
}

// RejectionError is the refusal r of a signal or update to workflow id as
// a closed-set error; its details carry the reason and the message name.
func RejectionError(id string, r RejectedSignal) *toolkit.Error {
	code, ok := rejectionCodes[r.Reason]
	if !ok {
		code = toolkit.Conflict
	}
	return toolkit.Errorf(code, "%s refused %s (%s): %s", id, r.Signal, r.Reason, r.Detail).
		WithDetail("reason", r.Reason).WithDetail("signal", r.Signal)
}

// RejectedSignal is a signal the workflow received and refused. The workflow
// keeps running; the entry tells the sender why.
type RejectedSignal struct {
	// Signal is the signal name (confirm, cancel, approval).
	Signal string `json:"signal"`
	// Reason is one of the Reject* constants.
	Reason string `json:"reason"`
	// Detail explains the reason for a human.
	Detail string `json:"detail"`
	// ApprovalID and Approver are set for approval signals that named them.
	ApprovalID string `json:"approval_id,omitempty"`
	Approver   string `json:"approver,omitempty"`
	// Instead says what to send instead, when the sender can fix it.
	Instead string `json:"instead,omitempty"`
	// At is the workflow time the signal was handled.
	At string `json:"at"`
}

// SignalLog records rejected signals for the status query. One log is
// shared by a workflow and its approval piece so the query lists them in
// the order they were handled.
type SignalLog struct {
	// Rejected holds the most recent rejections, oldest first.
	Rejected []RejectedSignal `json:"rejected"`
	// Total counts every rejection, including ones dropped from Rejected.
	Total int `json:"total"`
}

// Reject records r at the current workflow time and logs it.
func (l *SignalLog) Reject(ctx workflow.Context, r RejectedSignal) {
	r.At = workflow.Now(ctx).UTC().Format("2006-01-02T15:04:05Z07:00")
	l.Total++
	l.Rejected = append(l.Rejected, r)
	if len(l.Rejected) > maxRejectedKept {
		l.Rejected = l.Rejected[len(l.Rejected)-maxRejectedKept:]
	}
	workflow.GetLogger(ctx).Warn("signal rejected", "signal", r.Signal, "reason", r.Reason, "detail", r.Detail)
}

// Snapshot returns a copy safe to hand to a query.
func (l *SignalLog) Snapshot() SignalLog {
	return SignalLog{Rejected: append([]RejectedSignal{}, l.Rejected...), Total: l.Total}
}

// ReceiveRaw reads one signal without decoding it. Decoding into a typed
// value inside Receive would make the SDK drop a payload it cannot decode,
// silently; as a RawValue every payload arrives and we decide, and record,
// what is wrong with it. Receiving never fails the workflow task.
func ReceiveRaw(ctx workflow.Context, ch workflow.ReceiveChannel) converter.RawValue {
	var raw converter.RawValue
	ch.Receive(ctx, &raw)
	return raw
}

// ErrEmptySignal is a signal sent without input.
var ErrEmptySignal = errors.New("the signal has no payload")

// DecodeSignal decodes a raw signal payload into v: one JSON object, no
// unknown fields (a misspelt field is an error the sender should see, not a
// silently empty value), at most maxSignalBytes.
func DecodeSignal(raw converter.RawValue, v any) error {
	p := raw.Payload()
	if p == nil {
		return ErrEmptySignal
	}
	switch enc := string(p.GetMetadata()["encoding"]); enc {
	case "json/plain":
	case "binary/null":
		return ErrEmptySignal
	default:
		return fmt.Errorf("payload encoding %q is not JSON; send a JSON object", enc)
	}
	data := bytes.TrimSpace(p.GetData())
	if len(data) > maxSignalBytes {
		return fmt.Errorf("payload is larger than %d bytes", maxSignalBytes)
	}
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("payload must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	// encoding/json is deterministic; workflowcheck only sees reflection
	// reaching the runtime's stack walker and GC.
	//workflowcheck:ignore
	err := dec.Decode(v)
	if err != nil {
		return fmt.Errorf("payload does not match the signal: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("payload must be one JSON object")
	}
	return nil
}

// UpdateRefusal is an update's refusal as the closed-set error its caller
// gets (the same reasons and codes as a refused signal).
func UpdateRefusal(id, update, reason, detail string) error {
	return activities.ApplicationError(RejectionError(id, RejectedSignal{Signal: update, Reason: reason, Detail: detail}))
}

// FmtTime renders a workflow time for people.
func FmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
