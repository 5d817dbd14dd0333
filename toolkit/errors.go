package toolkit

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Code is one of the closed set of error codes (docs/errors.md#codes). No other
// string is ever returned to a caller: upstream codes are mapped into this
// set and kept in Details["upstream_code"].
type Code string

// The closed error-code set. Adding a code is a contract change
// (docs/errors.md#adding-a-code), so it is deliberately not extensible at run
// time.
const (
	InvalidArgument       Code = "INVALID_ARGUMENT"
	Unauthorized          Code = "UNAUTHORIZED"
	Forbidden             Code = "FORBIDDEN"
	NotFound              Code = "NOT_FOUND"
	Conflict              Code = "CONFLICT"
	RateLimited           Code = "RATE_LIMITED"
	Timeout               Code = "TIMEOUT"
	UpstreamError         Code = "UPSTREAM_ERROR"
	NeedsUserConfirmation Code = "NEEDS_USER_CONFIRMATION"
	ComplianceBlocked     Code = "COMPLIANCE_BLOCKED"
	PriceChanged          Code = "PRICE_CHANGED"
	OutOfStock            Code = "OUT_OF_STOCK"
	AddressInvalid        Code = "ADDRESS_INVALID"
)

// codeRules is the fixed table of the closed set. retry: a failure with
// the code is worth retrying; only transient conditions are (a retry of a
// bad argument or a compliance block would give the same answer and waste
// the upstream's quota). keep: a refusal with the code is the call's
// answer, kept under its idempotency key like data
// (docs/envelope.md#idempotency); a failure worth retrying is not (the
// same call may answer later), nor INVALID_ARGUMENT (nothing ran: the
// corrected call takes the key). Workflow tool calls, the gateway's direct
// reads and the audit of those read this one table (Response.KeepsKey).
var codeRules = map[Code]struct{ retry, keep bool }{
	InvalidArgument:       {retry: false, keep: false},
	Unauthorized:          {retry: false, keep: true},
	Forbidden:             {retry: false, keep: true},
	NotFound:              {retry: false, keep: true},
	Conflict:              {retry: true, keep: false},
	RateLimited:           {retry: true, keep: false},
	Timeout:               {retry: true, keep: false},
	UpstreamError:         {retry: true, keep: false},
	NeedsUserConfirmation: {retry: false, keep: true},
	ComplianceBlocked:     {retry: false, keep: true},
	PriceChanged:          {retry: false, keep: true},
	OutOfStock:            {retry: false, keep: true},
	AddressInvalid:        {retry: false, keep: true},
}

// Codes lists the closed set, sorted, for tests and documentation.
func Codes() []Code {
	out := make([]Code, 0, len(codeRules))
	for c := range codeRules {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Valid reports whether c belongs to the closed set.
func (c Code) Valid() bool { _, ok := codeRules[c]; return ok }

// Retryable reports whether an error with this code is worth retrying.
func (c Code) Retryable() bool { return codeRules[c].retry }

// KeepsKey reports whether a refusal with this code is kept under the
// call's idempotency key (codeRules).
func (c Code) KeepsKey() bool { return codeRules[c].keep }

// NonRetryableCodes lists the codes a Temporal RetryPolicy must never retry;
// activity options use it so the policy and the table cannot drift apart.
func NonRetryableCodes() []string {
	var out []string
	for _, c := range Codes() {
		if !c.Retryable() {
			out = append(out, string(c))
		}
	}
	return out
}

// Error is a tool failure with the recovery fields of
// docs/errors.md#error-object. It is the only error type the invoker returns.
type Error struct {
	Code               Code           `json:"code"`
	Message            string         `json:"message"`
	Details            map[string]any `json:"details,omitempty"`
	RecoverySuggestion string         `json:"recovery_suggestion,omitempty"`
	NextSteps          []string       `json:"next_steps,omitempty"`
	CanRetry           bool           `json:"can_retry"`
	RetryAfterSeconds  int            `json:"retry_after_seconds,omitempty"`

	cause error
}

// Errorf builds an Error with a formatted message. An unknown code is turned
// into UPSTREAM_ERROR with the offending value kept, so the set stays closed
// even against programming mistakes.
func Errorf(code Code, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if !code.Valid() {
		e.Code = UpstreamError
		e.Details = map[string]any{"invalid_code": string(code)}
	}
	e.CanRetry = e.Code.Retryable()
	return e
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap exposes the underlying cause for errors.Is / errors.As.
func (e *Error) Unwrap() error { return e.cause }

// WithCause keeps the underlying error for %w-style inspection. The cause is
// never serialised: it may hold secrets (URLs, keys) from an SDK.
func (e *Error) WithCause(err error) *Error { e.cause = err; return e }

// WithDetail adds one diagnostic field.
func (e *Error) WithDetail(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// WithRecovery sets the one-line suggestion and the tools an agent may try next.
func (e *Error) WithRecovery(suggestion string, nextSteps ...string) *Error {
	e.RecoverySuggestion = suggestion
	e.NextSteps = nextSteps
	return e
}

// WithRetryAfter records how long the caller should wait (RATE_LIMITED).
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	secs := int((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	e.RetryAfterSeconds = secs
	return e
}

// upstreamCodes maps the lower-case error names upstreams use (and common
// database/HTTP conditions) into the closed set
// (docs/errors.md#upstream-codes).
var upstreamCodes = map[string]Code{
	"not_found":         NotFound,
	"unauthorized":      Unauthorized,
	"forbidden":         Forbidden,
	"rate_limited":      RateLimited,
	"upstream_error":    UpstreamError,
	"db_error":          UpstreamError,
	"search_error":      UpstreamError,
	"timeout":           Timeout,
	"invalid_account":   NotFound,
	"invalid_request":   InvalidArgument,
	"no_evidence":       NotFound,
	"conflict":          Conflict,
	"idempotency_error": Conflict,
}

// FromUpstream maps an upstream error name into the closed set and keeps the
// original name in details.upstream_code. Unknown names become UPSTREAM_ERROR.
func FromUpstream(upstreamCode, format string, args ...any) *Error {
	code, ok := upstreamCodes[upstreamCode]
	if !ok {
		code = UpstreamError
	}
	return Errorf(code, format, args...).WithDetail("upstream_code", upstreamCode)
}

// carriedError is an error carried across the workflow engine: a Temporal
// ApplicationError offers these methods, and toolkit reads it through them
// without depending on the SDK (only the Temporal-facing packages do).
type carriedError interface {
	error
	Type() string
	Message() string
	HasDetails() bool
	Details(d ...any) error
}

// timedOutError is a Temporal TimeoutError, known by the method only it has.
type timedOutError interface {
	error
	HasLastHeartbeatDetails() bool
}

// AsError finds the *Error in err's chain, including one carried across
// Temporal as an ApplicationError. Anything else becomes UPSTREAM_ERROR, so
// callers always get a code from the closed set.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	var ae carriedError
	if errors.As(err, &ae) {
		code := Code(ae.Type())
		if out := detailsOf(ae); out != nil {
			return out
		}
		if !code.Valid() {
			return Errorf(UpstreamError, "%s", ae.Message()).WithDetail("upstream_code", ae.Type())
		}
		return Errorf(code, "%s", ae.Message())
	}
	var timeoutErr timedOutError
	if errors.As(err, &timeoutErr) {
		return Errorf(Timeout, "%s", timeoutErr.Error())
	}
	return Errorf(UpstreamError, "%s", err.Error()).WithCause(err)
}

// CodeOf returns the closed-set code of any error.
func CodeOf(err error) Code {
	if e := AsError(err); e != nil {
		return e.Code
	}
	return ""
}

// detailsOf reads the *Error an ApplicationError carries. An error built in
// this process (not yet serialised) holds its details as Go values, stored
// as either Error or *Error; the SDK panics when the target type differs,
// so both shapes are tried.
func detailsOf(ae carriedError) *Error {
	if !ae.HasDetails() {
		return nil
	}
	var val Error
	if tryDetails(ae, &val) && val.Code.Valid() {
		return &val
	}
	var ptr *Error
	if tryDetails(ae, &ptr) && ptr != nil && ptr.Code.Valid() {
		return ptr
	}
	return nil
}

func tryDetails(ae carriedError, target any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return ae.Details(target) == nil
}
