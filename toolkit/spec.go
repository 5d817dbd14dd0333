package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// Annotations describe a tool's behaviour; policy acts on them
// (docs/tools.md#annotations), they are not hints.
type Annotations struct {
	ReadOnly      bool `json:"read_only"`
	Idempotent    bool `json:"idempotent"`
	Destructive   bool `json:"destructive"`
	OpenWorld     bool `json:"open_world"`
	SensitiveSink bool `json:"sensitive_sink"`
}

// RetryPolicy is the tool's retry contract; the workflow's activity options
// are built from it so the spec is the single source.
type RetryPolicy struct {
	InitialInterval time.Duration `json:"initial_interval"`
	MaxInterval     time.Duration `json:"max_interval"`
	MaxAttempts     int32         `json:"max_attempts"`
	// FinalCodes are retryable codes (docs/errors.md#retryable-codes) that
	// this tool answers only for a state no retry changes: a step that
	// retries until done must not retry them forever (a CONFLICT of a hold
	// that already ended the other way). Its activities never retry them,
	// and its refusals carry can_retry false.
	FinalCodes []Code `json:"final_codes,omitempty"`
}

// Retries reports whether a failure with code c is retried under this
// policy: the code table's answer, unless the tool made the code final.
func (p RetryPolicy) Retries(c Code) bool {
	if !c.Retryable() {
		return false
	}
	for _, f := range p.FinalCodes {
		if f == c {
			return false
		}
	}
	return true
}

// Spec is a ToolSpec: the machine-readable contract of one tool.
type Spec struct {
	// Name is the dotted, stable tool name, e.g. pricing.get_realtime_quote.
	Name string `json:"name"`
	// Version is the tool's semver; it goes into every evidence snapshot.
	Version string `json:"version"`
	// Description says when to use the tool, its success condition and its
	// common failures; agents read it.
	Description string `json:"description"`
	// InputSchema and OutputSchema are file names under schemas/.
	InputSchema  string      `json:"input_schema"`
	OutputSchema string      `json:"output_schema"`
	Annotations  Annotations `json:"annotations"`
	// TTL is the freshness window of the answer (docs/envelope.md#ttl).
	TTL time.Duration `json:"ttl"`
	// Timeout bounds one execution of the tool.
	Timeout time.Duration `json:"timeout"`
	Retry   RetryPolicy   `json:"retry"`
	// EvidenceRequired makes a missing evidence store a failure.
	EvidenceRequired bool `json:"evidence_required"`
	// NeedsConsent: preflight refuses the call unless the request carries
	// explicit consent (high-risk tools, docs/tools.md#preflight).
	NeedsConsent bool `json:"needs_consent"`
	// NeedsConfirmation: the caller must obtain the user's confirmation
	// (NEEDS_USER_CONFIRMATION) before a non-dry-run call.
	NeedsConfirmation bool `json:"needs_confirmation"`
	// AllowedActors limits who may call; empty means every actor type.
	AllowedActors []ActorType `json:"allowed_actors,omitempty"`
	// Provider names the upstream that answers, for meta.provider.
	Provider string `json:"provider"`
	// Internal marks a step of a workflow (docs/quote-seals.md#internal-tools):
	// never listed to agents, never callable through ToolCall or MCP, only
	// by the workflow that owns it.
	Internal bool `json:"internal,omitempty"`
}

// InternalToolError is the refusal of an internal tool called from
// outside its workflow (docs/quote-seals.md#internal-tools).
func InternalToolError(name string) *Error {
	return Errorf(Forbidden, "%s is an internal step of the draft-order workflow and cannot be called directly", name).
		WithDetail("reason", "internal_tool").WithDetail("tool", name).
		WithRecovery("start a draft order (draft_order.start) and let its workflow price, total and create it")
}

// Output is what a tool handler returns on success.
type Output struct {
	// Data must validate against the output schema.
	Data any
	// Status is ok, degraded or empty; zero means ok.
	Status   Status
	Warnings []string
	CacheHit bool
	// Provider overrides Spec.Provider (e.g. "cache").
	Provider string
	// RulesetVersion is the version of the rule data the answer depends on.
	RulesetVersion string
	// Tainted marks text from outside that must not be trusted as instructions.
	Tainted bool
}

// Call is what a handler receives: the request envelope and the input that
// already passed schema validation.
type Call struct {
	Request Request
	Input   json.RawMessage
	Spec    Spec
}

// Bind decodes the validated input into v.
func (c *Call) Bind(v any) error {
	if err := json.Unmarshal(c.Input, v); err != nil {
		return Errorf(InvalidArgument, "input of %s: %v", c.Spec.Name, err)
	}
	return nil
}

// Handler runs a tool. Errors should be *Error; anything else is reported
// as UPSTREAM_ERROR.
type Handler func(ctx context.Context, call *Call) (*Output, error)

var (
	namePattern   = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	semverPattern = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// check refuses a spec that is incomplete or contradicts itself.
func (s Spec) check() error {
	switch {
	case !namePattern.MatchString(s.Name):
		return fmt.Errorf("tool name %q is not a dotted lower-case name", s.Name)
	case !semverPattern.MatchString(s.Version):
		return fmt.Errorf("tool %s: version %q is not semver", s.Name, s.Version)
	case len(s.Description) < 40:
		return fmt.Errorf("tool %s: description must say when to use it, its success condition and common failures", s.Name)
	case s.InputSchema == "" || s.OutputSchema == "":
		return fmt.Errorf("tool %s: input and output schemas are required", s.Name)
	case s.Timeout <= 0:
		return fmt.Errorf("tool %s: timeout must be positive", s.Name)
	case s.TTL < 0:
		return fmt.Errorf("tool %s: ttl must not be negative", s.Name)
	case s.Annotations.ReadOnly && s.Annotations.Destructive:
		return fmt.Errorf("tool %s: a destructive tool cannot be read_only", s.Name)
	case s.Annotations.ReadOnly && s.Annotations.SensitiveSink:
		return fmt.Errorf("tool %s: a sensitive sink writes data out, so it cannot be read_only", s.Name)
	case !s.Annotations.ReadOnly && !s.Annotations.Idempotent:
		return fmt.Errorf("tool %s: a write tool must be idempotent (docs/envelope.md#idempotency)", s.Name)
	case s.Annotations.Destructive && !s.NeedsConsent:
		return fmt.Errorf("tool %s: a destructive tool must require consent", s.Name)
	case s.Retry.MaxAttempts < 0:
		return fmt.Errorf("tool %s: retry max_attempts must not be negative", s.Name)
	}
	for _, a := range s.AllowedActors {
		if a != ActorUser && a != ActorAgent && a != ActorSystem {
			return fmt.Errorf("tool %s: unknown actor type %q", s.Name, a)
		}
	}
	return nil
}
