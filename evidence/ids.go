package evidence

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"
)

// crockford is the Crockford base-32 alphabet ULIDs use (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewSnapshotID returns "ev_" and a ULID-like 26-character id: 48 bits of
// milliseconds then 80 random bits, so ids sort by creation time and never
// collide in practice.
func NewSnapshotID(now time.Time) (string, error) {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := rand.Read(b[6:]); err != nil {
		return "", fmt.Errorf("snapshot id: %w", err)
	}
	return "ev_" + encode128(b), nil
}

// encode128 writes 128 bits as 26 base-32 digits (the first carries 3 bits).
func encode128(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
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
