package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/cartwright-dev/cartwright/internal/ulid"
)

// NewSnapshotID returns "ev_" and a ULID-like 26-character id: 48 bits of
// milliseconds then 80 random bits, so ids sort by creation time and never
// collide in practice.
func NewSnapshotID(now time.Time) (string, error) {
	id, err := ulid.New(now)
	if err != nil {
		return "", fmt.Errorf("snapshot id: %w", err)
	}
	return "ev_" + id, nil
}

// HashUserID is how a user id is kept in evidence and audit rows: never in
// clear, only as a domain-separated SHA-256 that still lets an auditor find
// one user's rows when they know the id.
func HashUserID(userID string) string {
	if userID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("cartwright/user-id/v1\x00" + userID))
	return "uh_" + hex.EncodeToString(sum[:16])
}
