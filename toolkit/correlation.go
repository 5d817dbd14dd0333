package toolkit

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
)

// correlationPattern is the one shape of a correlation id: `corr-` and 16
// lower-case hex digits (docs/evidence.md#correlation-id). The gateway
// takes a caller's id only in it, the tool-call workflow keeps one only in
// it, and the evidence store writes audit rows only under it.
var correlationPattern = regexp.MustCompile(`^corr-[0-9a-f]{16}$`)

// NewCorrelationID makes a fresh correlation id.
func NewCorrelationID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return "corr-" + hex.EncodeToString(b)
}

// ValidCorrelationID reports whether s has the correlation id's shape.
func ValidCorrelationID(s string) bool { return correlationPattern.MatchString(s) }

// correlationID is the invoker's id for a call that brought none. Inside
// an activity it is derived from the workflow and activity ids, so every
// retry of one call shares it and its two-phase audit row.
func correlationID(call CallContext) string {
	if call.WorkflowID != "" {
		sum := sha256.Sum256([]byte(call.WorkflowID + "/" + call.ActivityID))
		return "corr-" + hex.EncodeToString(sum[:8])
	}
	return NewCorrelationID()
}
