package toolkit

import (
	"encoding/json"
	"fmt"
	"testing"
)

// OutputHash answers what CanonicalHash answers, from the memo or not,
// for bytes the caller changes after hashing, and past the memo's size.
func TestOutputHashIsCanonicalHash(t *testing.T) {
	check := func(raw []byte) {
		t.Helper()
		got, gotErr := OutputHash(raw)
		want, wantErr := CanonicalHash(json.RawMessage(raw))
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%s: OutputHash %q (%v), CanonicalHash %q (%v)", raw, got, gotErr, want, wantErr)
		}
	}
	buf := []byte(`{"b":1.50,"a":"x"}`)
	check(buf)
	if _, hit := outputHashes.get(buf); !hit {
		t.Fatal("a hashed output is not remembered")
	}
	check(buf) // from the memo
	copy(buf, `{"b":2.50`)
	check(buf) // the same buffer, other bytes
	check([]byte(`{"a":1,"a":2}`))
	check([]byte(`not json`))
	for i := range 3 * hashMemoSize {
		check([]byte(fmt.Sprintf(`{"n":%d}`, i)))
	}
	if n := outputHashes.len(); n > hashMemoSize {
		t.Fatalf("the memo holds %d outputs, at most %d", n, hashMemoSize)
	}
}

func (m *hashMemo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byBytes)
}
