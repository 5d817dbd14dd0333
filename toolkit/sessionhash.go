package toolkit

import (
	"crypto/sha256"
	"encoding/hex"
)

// SessionHash is how logs name a caller's session: a session id is a
// bearer credential (docs/privacy.md#logs), so a log line carries the
// first 8 bytes of its SHA-256 in hex, enough to follow one session
// through the log and useless to resume it. Empty for no session.
func SessionHash(sessionID string) string {
	if sessionID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(sessionID))
	return hex.EncodeToString(sum[:8])
}
