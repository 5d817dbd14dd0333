package toolkit

import (
	"context"
	"encoding/json"
	"testing"
)

// The input digest computed from the decoded input and the fingerprint
// must be the digest of the bytes (inputDigest), whether sanitising
// changes the input or not, and when jcs refuses the bytes.
func TestInputDigestOfMatchesInputDigest(t *testing.T) {
	inputs := []string{
		`{}`,
		`{"country":"DE","quantity":2}`,
		`{"note":"mail jane.doe@example.com","quantity":1}`,
		`{"password":"hunter2","country":"DE"}`,
		`{"a":1.0,"b":[1e2,"x",null,true],"c":{"z":"\u003c\u2028/","y":-0}}`,
		`{"a":1,"a":2}`, // duplicate key: jcs refuses the bytes
		`{"n":1e400}`,   // out of range for jcs, fine for encoding/json
		`{"é":"\ud83d\ude00","e":"x"}`,
	}
	for _, in := range inputs {
		raw := json.RawMessage(in)
		tree, err := decodeJSON(raw)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		fp, fpErr := CanonicalHash(raw)
		got, gotErr := inputDigestOf(tree, fp, fpErr)()
		want, wantErr := inputDigest(raw)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: digest %q (%v), want %q (%v)", in, got, gotErr, want, wantErr)
		}
	}
}

// Through the invoker: the snapshot's digest is the sanitised input's, and
// equals the envelope's fingerprint exactly when sanitising changed nothing.
func TestSnapshotInputDigest(t *testing.T) {
	calls := 0
	inv, sink := newTestInvoker(t, echoSpec(), echoHandler(&calls))
	for _, in := range []map[string]any{
		{"country": "DE", "quantity": 2},
		{"country": "DE", "quantity": 2, "note": "call +49 30 1234 5678"},
	} {
		resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), in)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(in)
		want, err := inputDigest(raw)
		if err != nil {
			t.Fatal(err)
		}
		snap := sink.snaps[sink.count()-1]
		if snap.InputDigest != want {
			t.Errorf("%v: digest %s, want %s", in, snap.InputDigest, want)
		}
		if _, pii := in["note"]; (snap.InputDigest == resp.Meta.InputFingerprint) == pii {
			t.Errorf("%v: digest %s, fingerprint %s", in, snap.InputDigest, resp.Meta.InputFingerprint)
		}
	}
}
