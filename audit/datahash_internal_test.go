package audit

import (
	"encoding/json"
	"testing"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestDataHashIsCanonicalHash: the shortcut through the snapshot's
// canonical output (docs/performance.md#audit-rate) answers what
// toolkit.CanonicalHash answers, whether the history's data is that form
// byte for byte, the same value written otherwise, or another value.
func TestDataHashIsCanonicalHash(t *testing.T) {
	stored := &evidence.SnapshotRecord{Output: json.RawMessage(`{"b": [1, 2.50], "a": "x<y"}`)}
	for _, data := range []string{
		`{"a":"x<y","b":[1,2.5]}`,          // the canonical form
		`{"a":"x\u003cy","b":[1,2.5]}`,     // as encoding/json escapes it
		`{"b": [1, 2.50], "a": "x<y"}`,     // as PostgreSQL writes it
		`{"a":"x<y","b":[1,2.6]}`,          // another value
		`{"a":"x<y","b":[1,2.5],"c":null}`, // another value
		`null`, `{"a":"x<y","b":[1,2.5]`,   // another value; not JSON
	} {
		want, wantErr := toolkit.CanonicalHash(json.RawMessage(data))
		for _, snap := range []*evidence.SnapshotRecord{stored, nil} {
			got, err := dataHash(json.RawMessage(data), snap)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Errorf("dataHash(%s, %v) = %s, %v; CanonicalHash = %s, %v", data, snap != nil, got, err, want, wantErr)
			}
		}
	}
}
