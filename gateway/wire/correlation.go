package wire

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
)

// HeaderCorrelationID carries the correlation id in and out of the HTTP
// gateway (MCP-INV-05/06, docs/mcp.md#correlation-id).
const HeaderCorrelationID = "X-Correlation-ID"

var correlationPattern = regexp.MustCompile(`^corr-[0-9a-f]{16}$`)

// NewCorrelationID makes a fresh `corr-` + 16 lower-case hex digits.
func NewCorrelationID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return "corr-" + hex.EncodeToString(b)
}

// ValidCorrelationID reports whether s has the seed's exact shape.
func ValidCorrelationID(s string) bool { return correlationPattern.MatchString(s) }

// CorrelationFrom takes the caller's id when it is valid, else makes one:
// one id per request, made once at the entry.
func CorrelationFrom(header string) string {
	if ValidCorrelationID(header) {
		return header
	}
	return NewCorrelationID()
}
