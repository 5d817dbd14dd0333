package toolkit

import (
	"encoding/json"
	"fmt"
)

// ActorType says who triggered a call (docs/envelope.md#actors), for
// accountability.
type ActorType string

// The three actor types (docs/envelope.md#actors).
const (
	ActorUser   ActorType = "user"
	ActorAgent  ActorType = "agent"
	ActorSystem ActorType = "system"
)

// Actor identifies who triggered a tool call.
type Actor struct {
	Type ActorType `json:"type"`
	ID   string    `json:"id"`
}

// Client names the calling application.
type Client struct {
	App     string `json:"app,omitempty"`
	Version string `json:"version,omitempty"`
}

// Trace carries the caller's span so tools propagate it downstream.
// Traceparent is the W3C trace context header of the caller's span
// (docs/envelope.md#request-envelope): the client makes it the parent of
// the workflow's spans.
type Trace struct {
	SpanID       string `json:"span_id,omitempty"`
	ParentSpanID string `json:"parent_span_id,omitempty"`
	Traceparent  string `json:"traceparent,omitempty"`
}

// Request is the request envelope every tool call carries
// (docs/envelope.md#request-envelope). CorrelationID (`corr-{16 hex}`,
// docs/evidence.md#correlation-id) and Consent are ours: the first ties audit
// rows to evidence, the second is the explicit consent a high-risk tool needs
// in preflight.
type Request struct {
	RequestID string `json:"request_id"`
	Actor     Actor  `json:"actor"`
	UserID    string `json:"user_id"`
	// Tenant, when set, is the tenant whose merchants alone the call may
	// reach (docs/mcp.md#tenants); set by the gateway from the token.
	Tenant         string `json:"tenant,omitempty"`
	SessionID      string `json:"session_id,omitempty"`
	Locale         string `json:"locale,omitempty"`
	Currency       string `json:"currency,omitempty"`
	Timezone       string `json:"timezone,omitempty"`
	Client         Client `json:"client,omitempty"`
	DryRun         bool   `json:"dry_run"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Trace          Trace  `json:"trace,omitempty"`
	CorrelationID  string `json:"correlation_id,omitempty"`
	Consent        bool   `json:"consent,omitempty"`
}

// Status is the result status of a tool call (docs/envelope.md#status).
type Status string

// The four statuses (docs/envelope.md#status).
const (
	StatusOK       Status = "ok"
	StatusDegraded Status = "degraded"
	StatusEmpty    Status = "empty"
	StatusError    Status = "error"
)

// Source is one entry of evidence.sources: what produced the data and the
// hash of its canonical JSON.
type Source struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Hash string `json:"hash"`
	TS   string `json:"ts"`
}

// Evidence points at the snapshot stored for this call.
type Evidence struct {
	SnapshotID string   `json:"snapshot_id"`
	Sources    []Source `json:"sources"`
}

// Meta carries observability fields (docs/envelope.md#meta); never shown to
// users.
type Meta struct {
	DurationMS        int64  `json:"duration_ms"`
	Provider          string `json:"provider,omitempty"`
	CacheHit          bool   `json:"cache_hit"`
	InputFingerprint  string `json:"input_fingerprint,omitempty"`
	OutputFingerprint string `json:"output_fingerprint,omitempty"`
	RedactionApplied  bool   `json:"redaction_applied"`
	Tainted           bool   `json:"tainted,omitempty"`
	RulesetVersion    string `json:"ruleset_version,omitempty"`
}

// Response is the response envelope (docs/envelope.md#response-envelope).
// Data is kept as raw JSON so that the bytes an auditor hashes are exactly
// the bytes the workflow history holds.
type Response struct {
	OK         bool            `json:"ok"`
	Status     Status          `json:"status"`
	Tool       string          `json:"tool"`
	Version    string          `json:"version"`
	Data       json.RawMessage `json:"data,omitempty"`
	Warnings   []string        `json:"warnings"`
	Error      *Error          `json:"error,omitempty"`
	TTLSeconds int             `json:"ttl_seconds"`
	Evidence   *Evidence       `json:"evidence,omitempty"`
	Meta       Meta            `json:"meta"`
}

// Decode unmarshals the response data into v.
func (r *Response) Decode(v any) error {
	if len(r.Data) == 0 {
		return fmt.Errorf("response of %s has no data", r.Tool)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("decode %s data: %w", r.Tool, err)
	}
	return nil
}

// KeepsKey reports whether the envelope is an answer its idempotency key
// keeps (docs/envelope.md#idempotency): data, or a refusal whose code
// keeps the key (Code.KeepsKey). The one rule for every path a call takes:
// a tool-call workflow gives back the key of an answer it does not keep,
// the gateway's direct read writes no binding for it, the audit of direct
// calls expects none.
func (r Response) KeepsKey() bool {
	return r.OK || r.Error == nil || r.Error.Code.KeepsKey()
}

// SnapshotID returns the evidence snapshot id, or "" when none was stored.
func (r *Response) SnapshotID() string {
	if r.Evidence == nil {
		return ""
	}
	return r.Evidence.SnapshotID
}

// Warning constants (docs/envelope.md#warnings): stable strings, counted in
// metrics.
const (
	WarnTruncatedOutput = "truncated_output"
	WarnPIIRedacted     = "pii_redacted"
	WarnSecretMasked    = "secret_masked"
	WarnUsedCache       = "used_cache"
	WarnTaintedText     = "tainted_text"
	WarnDryRun          = "dry_run"
)

// ErrorResponse is the envelope of a call that ended in err without the
// tool's own envelope (refused before the tool ran, or failed on the way
// to it): ok=false, status error, the error in the closed set. Every answer
// a caller gets is an envelope, this one included.
func ErrorResponse(tool, version string, err error) Response {
	return Response{OK: false, Status: StatusError, Tool: tool, Version: version, Warnings: []string{}, Error: AsError(err)}
}
