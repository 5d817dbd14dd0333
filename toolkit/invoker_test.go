package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
)

func TestInvalidInputNeverReachesTheTool(t *testing.T) {
	cases := map[string]struct {
		input any
		field string
	}{
		"bad country":   {map[string]any{"country": "Germany", "quantity": 1}, "country"},
		"zero quantity": {map[string]any{"country": "DE", "quantity": 0}, "quantity"},
		"missing field": {map[string]any{"country": "DE"}, "quantity"},
		"unknown field": {map[string]any{"country": "DE", "quantity": 1, "extra": true}, "extra"},
		"wrong type":    {map[string]any{"country": "DE", "quantity": "two"}, "quantity"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls := 0
			inv, sink := newTestInvoker(t, echoSpec(), echoHandler(&calls))
			resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), tc.input)
			te := AsError(err)
			if te == nil || te.Code != InvalidArgument {
				t.Fatalf("want INVALID_ARGUMENT, got %v", err)
			}
			// The refusal is evidenced (one snapshot holding the error),
			// the tool never ran.
			if calls != 0 || sink.count() != 1 || sink.snaps[0].Status != StatusError {
				t.Fatalf("tool called %d times, %d snapshots: invalid input reached the tool", calls, sink.count())
			}
			fields, _ := json.Marshal(te.Details["fields"])
			if !strings.Contains(string(fields), tc.field) {
				t.Fatalf("error does not name %q: %s", tc.field, fields)
			}
			if resp.OK || resp.Status != StatusError || resp.Error.Code != InvalidArgument {
				t.Fatalf("envelope does not carry the error: %+v", resp)
			}
		})
	}
}

func TestEnvelopeIsCheckedBeforeTheTool(t *testing.T) {
	calls := 0
	inv, _ := newTestInvoker(t, echoSpec(), echoHandler(&calls))
	req := validRequest()
	req.RequestID, req.Actor.Type = "", "robot"
	_, err := inv.Invoke(context.Background(), "test.echo", req, map[string]any{"country": "DE", "quantity": 1})
	te := AsError(err)
	if te.Code != InvalidArgument || calls != 0 {
		t.Fatalf("code %v, calls %d", te.Code, calls)
	}
	if got := te.Details["fields"].([]string); len(got) != 2 || got[0] != "request_id" || got[1] != "actor.type" {
		t.Fatalf("fields = %v", got)
	}
}

func TestWriteToolNeedsIdempotencyKeyActorAndConsent(t *testing.T) {
	spec := echoSpec()
	spec.Name = "test.write"
	spec.Annotations = Annotations{Idempotent: true, Destructive: true}
	spec.NeedsConsent = true
	spec.AllowedActors = []ActorType{ActorUser}
	calls := 0
	inv, _ := newTestInvoker(t, spec, echoHandler(&calls))
	in := map[string]any{"country": "DE", "quantity": 1}

	req := validRequest()
	req.Actor.Type = ActorUser
	if _, err := inv.Invoke(context.Background(), "test.write", req, in); CodeOf(err) != InvalidArgument {
		t.Fatalf("no idempotency key: %v", err)
	}
	req.IdempotencyKey = "order-2026-0001"
	if _, err := inv.Invoke(context.Background(), "test.write", req, in); CodeOf(err) != Forbidden {
		t.Fatalf("no consent: %v", err)
	}
	req.Consent = true
	req.Actor.Type = ActorAgent
	if _, err := inv.Invoke(context.Background(), "test.write", req, in); CodeOf(err) != Forbidden {
		t.Fatalf("agent actor on a user-only tool: %v", err)
	}
	req.Actor.Type = ActorUser
	if _, err := inv.Invoke(context.Background(), "test.write", req, in); err != nil || calls != 1 {
		t.Fatalf("valid write call: %v, calls %d", err, calls)
	}
}

func TestOutputBreakingSchemaIsAnErrorWithoutEvidence(t *testing.T) {
	inv, sink := newTestInvoker(t, echoSpec(), func(context.Context, *Call) (*Output, error) {
		return &Output{Data: map[string]any{"country": 49}}, nil
	})
	resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1})
	if CodeOf(err) != UpstreamError {
		t.Fatalf("want UPSTREAM_ERROR, got %v", err)
	}
	if sink.count() != 0 || resp.Evidence != nil || resp.Data != nil || resp.OK {
		t.Fatalf("a broken output produced evidence or data: %+v (snapshots %d)", resp, sink.count())
	}
}

func TestSuccessfulCallProducesEnvelopeAndEvidence(t *testing.T) {
	calls := 0
	inv, sink := newTestInvoker(t, echoSpec(), echoHandler(&calls))
	resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 2})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.OK || resp.Status != StatusOK || resp.TTLSeconds != 60 || resp.Meta.Provider != "test" {
		t.Fatalf("envelope: %+v", resp)
	}
	if sink.count() != 1 || resp.SnapshotID() == "" {
		t.Fatalf("snapshots %d, id %q", sink.count(), resp.SnapshotID())
	}
	want, _ := CanonicalHash(resp.Data)
	snap := sink.snaps[0]
	if snap.OutputHash != want || resp.Evidence.Sources[0].Hash != want || resp.Meta.OutputFingerprint != want {
		t.Fatalf("hashes disagree: snapshot %s, source %s, want %s", snap.OutputHash, resp.Evidence.Sources[0].Hash, want)
	}
	if snap.RawOutput != nil || resp.Meta.RedactionApplied {
		t.Fatal("nothing was redacted, yet raw output was kept")
	}
	if !strings.HasPrefix(snap.CorrelationID, "corr-") || len(snap.CorrelationID) != 21 {
		t.Fatalf("correlation id %q is not corr-{16 hex}", snap.CorrelationID)
	}
	var out struct{ Quantity int }
	if err := resp.Decode(&out); err != nil || out.Quantity != 2 {
		t.Fatalf("decode: %v %+v", err, out)
	}
}

// TestOutputIsCanonical: an answer's JSON is its canonical form, what its
// hash hashes; a value the direct encoder leaves to jcs (a key past
// U+FFFF) is the tool's own bytes when sanitising changed nothing, and raw
// JSON that repeats a key, which the canonical form refuses, is answered
// as its decoded value.
func TestOutputIsCanonical(t *testing.T) {
	for _, tc := range []struct {
		name string
		data any
		want string // the envelope's data
	}{
		{"struct", struct {
			Quantity int    `json:"quantity"`
			Country  string `json:"country"`
			Note     string `json:"note"`
		}{3, "DE", "<b>&</b> \u2028"}, "{\"country\":\"DE\",\"note\":\"<b>&</b> \u2028\",\"quantity\":3}"},
		{"repeated key", json.RawMessage(`{"country":"FR","quantity":1,"country":"DE"}`), `{"country":"DE","quantity":1}`},
		{"left to jcs", json.RawMessage(`{"quantity":1,"country":"DE","\ud83d\ude00":1}`), `{"quantity":1,"country":"DE","\ud83d\ude00":1}`},
		{"left to jcs, repeated key", json.RawMessage(`{"quantity":1,"country":"FR","country":"DE","\ud83d\ude00":1}`),
			`{"country":"DE","quantity":1,"😀":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, sink := newTestInvoker(t, echoSpec(), func(context.Context, *Call) (*Output, error) {
				return &Output{Data: tc.data}, nil
			})
			resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := CanonicalHash(json.RawMessage(tc.want))
			if string(resp.Data) != tc.want || resp.Meta.OutputFingerprint != want || sink.snaps[0].OutputHash != want {
				t.Fatalf("data %s hash %s, want %s %s", resp.Data, resp.Meta.OutputFingerprint, tc.want, want)
			}
		})
	}
}

func TestRedactedOutputKeepsRawForEncryptedEvidenceOnly(t *testing.T) {
	inv, sink := newTestInvoker(t, echoSpec(), func(context.Context, *Call) (*Output, error) {
		return &Output{Data: map[string]any{"country": "DE", "quantity": 1, "note": "mail jane.doe@example.com"}}, nil
	})
	resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(resp.Data), "jane.doe") || !resp.Meta.RedactionApplied {
		t.Fatalf("PII left in envelope data: %s", resp.Data)
	}
	snap := sink.snaps[0]
	if strings.Contains(string(snap.Output), "jane.doe") || !strings.Contains(string(snap.RawOutput), "jane.doe") {
		t.Fatalf("clear output %s / raw output %s", snap.Output, snap.RawOutput)
	}
	if !containsString(resp.Warnings, WarnPIIRedacted) {
		t.Fatalf("warnings %v lack %s", resp.Warnings, WarnPIIRedacted)
	}
}

func TestTimeoutAndPanicAndUntypedErrorsMapIntoTheSet(t *testing.T) {
	cases := map[string]struct {
		h    Handler
		want Code
	}{
		"slow": {func(ctx context.Context, _ *Call) (*Output, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, Timeout},
		"panic":   {func(context.Context, *Call) (*Output, error) { panic("boom") }, UpstreamError},
		"untyped": {func(context.Context, *Call) (*Output, error) { return nil, errors.New("db gone") }, UpstreamError},
		"custom code": {func(context.Context, *Call) (*Output, error) {
			return nil, Errorf("TOOL.MY.OWN.CODE", "made up")
		}, UpstreamError},
		"upstream name": {func(context.Context, *Call) (*Output, error) {
			return nil, FromUpstream("rate_limited", "slow down").WithRetryAfter(3 * time.Second)
		}, RateLimited},
		"nil output": {func(context.Context, *Call) (*Output, error) { return nil, nil }, UpstreamError},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := echoSpec()
			spec.Timeout = 50 * time.Millisecond
			inv, _ := newTestInvoker(t, spec, tc.h)
			_, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1})
			if got := CodeOf(err); got != tc.want {
				t.Fatalf("code %q, want %q (%v)", got, tc.want, err)
			}
			if !CodeOf(err).Valid() {
				t.Fatalf("code %q is outside the closed set", CodeOf(err))
			}
		})
	}
}

func TestEveryCodeHasAFixedRetryability(t *testing.T) {
	if len(Codes()) != 13 {
		t.Fatalf("closed set has %d codes, docs/errors.md#codes has 13", len(Codes()))
	}
	retryable := map[Code]bool{Conflict: true, RateLimited: true, Timeout: true, UpstreamError: true}
	for _, c := range Codes() {
		if c.Retryable() != retryable[c] {
			t.Errorf("%s retryable = %v", c, c.Retryable())
		}
	}
	if got := len(NonRetryableCodes()); got != 9 {
		t.Fatalf("non-retryable codes %d, want 9", got)
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestAsErrorReadsLocalDetailsOfEitherShape(t *testing.T) {
	src := Errorf(AddressInvalid, "bad postcode").WithDetail("fields", []string{"postal_code"})
	for name, details := range map[string]any{"value": *src, "pointer": src} {
		err := temporal.NewApplicationErrorWithOptions("bad", string(AddressInvalid), temporal.ApplicationErrorOptions{Details: []any{details}})
		got := AsError(err)
		if got.Code != AddressInvalid || got.Details["fields"] == nil {
			t.Fatalf("%s details: got %+v", name, got)
		}
	}
}
