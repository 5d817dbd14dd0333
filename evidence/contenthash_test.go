package evidence

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// sampleRecord has a distinct value in every field; its hash format is 1.
func sampleRecord() SnapshotRecord {
	at := time.Date(2026, 11, 23, 9, 30, 1, 123456000, time.UTC)
	return SnapshotRecord{
		SnapshotID: "ev_01", ChainKey: "wf/draft-order/u_1/k", ChainSeq: 3, HashFormat: hashFormatSeqInContent,
		Tool: "pricing.get_realtime_quote", ToolVersion: "1.0.0", Build: "abc123", WorkflowID: "draft-order/u_1/k",
		RunID: "run-1", ActivityID: "7", ActivityType: "GetQuote", Attempt: 2, RequestID: "req-1", CorrelationID: "corr-0123456789abcdef",
		UserIDHash: "uh_1", InputDigest: "sha256:in", Output: json.RawMessage(`{"a":1}`), OutputHash: "sha256:out",
		HasRaw: true, RawKeyID: "local-1", RulesetVersion: "tax-1", TTLSeconds: 300, Status: "ok",
		CreatedAt: at, RecordedAt: at.Add(time.Second), ContentHash: "sha256:c", PrevChainHash: "sha256:p", ChainHash: "sha256:h",
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", WorkflowType: "DraftOrder", SignerKeyID: "worker-1", RowSignature: "c2ln",
		rawCiphertext: []byte("sealed"), rawNonce: []byte("nonce"),
	}
}

// TestContentHashIsStable pins the content hash of a known row in each
// format: every stored chain must still verify after a deployment. (The
// format-2 values were checked outside Go too: the SHA-256 of the row's
// fields with "hash_format": 2 and no chain_seq, keys sorted, no spaces.)
func TestContentHashIsStable(t *testing.T) {
	for _, c := range []struct {
		format         int
		withRaw, noRaw string
	}{
		{hashFormatSeqInContent, "sha256:58cd8dabc5c58d3d8aa4ed80a1ea48a5c67ba2edcc9021c486de7d95fa913271",
			"sha256:ca31ab3e07c3b584db630545d99ce790cf701ef79ce30ed12663d34122df3902"},
		{hashFormatContentOnly, "sha256:eef3e4c579bf0c34cb0f05a0d0d6b74d82b6ad0fbac24d0029f9f3bbd9a661cc",
			"sha256:7a0e9ead1f24b16d4ba1ed09b6e0bc5e8c0bc891ad2a9501849664139ec7c5dc"},
	} {
		r := sampleRecord()
		r.HashFormat = c.format
		got, err := r.contentHash()
		if err != nil || got != c.withRaw {
			t.Errorf("format %d: contentHash = %s (%v), want %s", c.format, got, err, c.withRaw)
		}
		r.rawCiphertext, r.rawNonce, r.RawKeyID = nil, nil, ""
		got, err = r.contentHash()
		if err != nil || got != c.noRaw {
			t.Errorf("format %d without raw: contentHash = %s (%v), want %s", c.format, got, err, c.noRaw)
		}
	}
}

// TestContentHashCoversEveryColumn: changing any field of a row changes its
// content hash, except those the hash deliberately leaves out (the output,
// covered through output_hash; the chain links; recorded_at; has_raw,
// derived from the sealed raw output, which raw_digest covers; the trace
// id, which locates the call in a tracing backend and must not change the
// hash of rows written before it existed), chain_seq in formats 2 and 3,
// where the chain links stand for it, the signature (which signs the hash),
// and in formats 1 and 2 the workflow type and signer key id they did not
// record. A column added to SnapshotRecord is covered without anyone
// listing it.
func TestContentHashCoversEveryColumn(t *testing.T) {
	for _, format := range []int{hashFormatSeqInContent, hashFormatContentOnly, hashFormatSigned} {
		base := sampleRecord()
		base.HashFormat = format
		want, err := base.contentHash()
		if err != nil {
			t.Fatal(err)
		}
		// canon is not a column: it memoises the output's canonical form.
		left := map[string]bool{"Output": true, "HasRaw": true, "RecordedAt": true, "ContentHash": true, "PrevChainHash": true,
			"ChainHash": true, "TraceID": true, "ChainSeq": format != hashFormatSeqInContent, "canon": true,
			"RowSignature": true, "WorkflowType": format != hashFormatSigned, "SignerKeyID": format != hashFormatSigned}
		typ := reflect.TypeOf(SnapshotRecord{})
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Name == "HashFormat" {
				continue // picks the formula: TestContentHashFormatIsBound
			}
			r := base
			reflect.NewAt(f.Type, reflect.ValueOf(&r).Elem().Field(i).Addr().UnsafePointer()).Elem().Set(reflect.Zero(f.Type))
			got, err := r.contentHash()
			if err != nil {
				t.Fatal(err)
			}
			if changed := got != want; changed == left[f.Name] {
				t.Errorf("format %d, field %s: hash changed=%v, want %v", format, f.Name, changed, !left[f.Name])
			}
		}
	}
}

// TestContentHashFormatIsBound: a row's hash under one format is not its
// hash under the other, and a format the store does not know is an error,
// so verify reports a row whose marker was changed.
func TestContentHashFormatIsBound(t *testing.T) {
	r := sampleRecord()
	one, err1 := r.contentHash()
	r.HashFormat = hashFormatContentOnly
	two, err2 := r.contentHash()
	if err1 != nil || err2 != nil || one == two {
		t.Fatalf("format 1 %s (%v), format 2 %s (%v): want two different hashes", one, err1, two, err2)
	}
	r.HashFormat = hashFormatSigned
	if three, err := r.contentHash(); err != nil || three == two || three == one {
		t.Fatalf("format 3 %s (%v): want a third hash", three, err)
	}
	for _, f := range []int{0, 4} {
		r.HashFormat = f
		if h, err := r.contentHash(); err == nil {
			t.Errorf("format %d hashed to %s, want an error", f, h)
		}
	}
}
