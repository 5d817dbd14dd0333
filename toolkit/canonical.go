package toolkit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Canonical returns the RFC 8785 (JCS) form of v. Two values that are equal
// as JSON give the same bytes whatever their key order or number spelling,
// which is what makes a hash in the history comparable with the evidence.
func Canonical(v any) ([]byte, error) {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	case map[string]any, []any:
		if out, ok := canonicalTree(x); ok {
			return out, nil
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("canonical json: %w", err)
		}
		raw = b
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("canonical json: %w", err)
		}
		raw = b
	}
	if out, ok := canonicalRaw(raw); ok {
		return out, nil
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return out, nil
}

// CanonicalHash is "sha256:" plus the hex SHA-256 of Canonical(v).
func CanonicalHash(v any) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	return HashBytes(c), nil
}

// HashBytes is "sha256:" plus the hex SHA-256 of b.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
