package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Invoker runs every tool call through one pipeline (docs/tools.md#pipeline):
// preflight → execute under the tool's timeout → output validation →
// sanitising → evidence → envelope. Nothing reaches a tool that failed
// preflight, and nothing leaves it that failed output validation.
type Invoker struct {
	reg   *Registry
	sink  EvidenceSink
	log   *zap.Logger
	build string
	now   func() time.Time
	obs   Observer
	// callers is who may call what from inside a workflow (nil: not
	// configured, see SetCallers).
	callers *Callers
}

// NewInvoker wires the registry, the evidence store and the logger. A nil
// sink stores nothing, and a tool whose spec requires evidence then fails.
func NewInvoker(reg *Registry, sink EvidenceSink, logger *zap.Logger) *Invoker {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Invoker{reg: reg, sink: sink, log: logger, build: BuildHash(), now: time.Now, obs: nopObserver{}}
}

// Registry returns the registry the invoker serves.
func (inv *Invoker) Registry() *Registry { return inv.reg }

// SetCallers sets which workflow runs may call which tools; the worker's
// wiring sets it before any worker starts (docs/quote-seals.md#who-may-call-a-step).
func (inv *Invoker) SetCallers(c *Callers) { inv.callers = c }

// Callers is the policy SetCallers set; nil when none was.
func (inv *Invoker) Callers() *Callers { return inv.callers }

// Invoke runs tool name with input for the caller described by req. On
// failure the error is a *Error with a code from the closed set and the
// response (still returned) carries it in its error field.
//
// One call is one sequence, each step a function below, in this order:
//
//	lookup   the registered, enabled tool                     (lookup)
//	validate the envelope, the caller, the input's schema     (preflight)
//	run      the handler under the tool's timeout             (run)
//	envelope output schema, sanitising, fingerprints          (envelope)
//	record   the evidence snapshot; its id goes in the envelope (record)
//
// A step that fails ends the sequence; if the failure is a refusal (a code
// no retry changes) of a registered tool, the refusal is recorded instead
// (recordRefusal, docs/tools.md#pipeline).
func (inv *Invoker) Invoke(ctx context.Context, name string, req Request, input any) (*Response, error) {
	return inv.invoke(ctx, nil, name, req, input)
}

// invoke is Invoke, staging the snapshot in b when b is not nil.
func (inv *Invoker) invoke(ctx context.Context, b *Batch, name string, req Request, input any) (*Response, error) {
	start := inv.now()
	ctx, observed := inv.obs.Call(ctx, name)
	c := &toolCall{name: name, req: req, input: input, call: CallFrom(ctx), start: start, batch: b}
	if c.req.CorrelationID == "" {
		c.req.CorrelationID = correlationID(c.call)
	}
	logger := inv.logger(c)
	logger.Info("tool call", zap.String("event", "agent_tool_call"), zap.String("status", "running"))

	resp := &Response{Tool: name, Warnings: []string{}}
	err := inv.pipeline(ctx, c, resp)
	defer func() { observed(c.outcome(resp)) }()
	resp.Meta.DurationMS = inv.now().Sub(c.start).Milliseconds()
	fields := []zap.Field{
		zap.String("event", "agent_tool_done"),
		zap.Int64("duration_ms", resp.Meta.DurationMS),
		zap.Int("warnings_count", len(resp.Warnings)),
		zap.String("provider", resp.Meta.Provider),
		zap.Bool("cache_hit", resp.Meta.CacheHit),
	}
	if err != nil {
		te := inv.refused(ctx, c, resp, err)
		logger.Warn("tool call failed", append(fields, zap.String("status", "error"), zap.String("error_code", string(te.Code)))...)
		return resp, te
	}
	logger.Info("tool call done", append(fields, zap.String("status", "completed"), zap.String("snapshot_id", resp.SnapshotID()))...)
	return resp, nil
}

// pipeline is the sequence Invoke documents: lookup → validate → run →
// envelope → record, filling resp on the way.
func (inv *Invoker) pipeline(ctx context.Context, c *toolCall, resp *Response) error {
	tool, err := inv.lookup(c, resp)
	if err != nil {
		return err
	}
	_, done := inv.obs.Phase(ctx, c.name, PhasePreflight)
	rawIn, inTree, err := inv.preflight(tool, c.req, c.input)
	done(err)
	if err != nil {
		return err
	}
	fingerprint, fpErr := inputFingerprint(rawIn, inTree)
	resp.Meta.InputFingerprint, c.rawIn = fingerprint, rawIn

	c.ran = true
	xctx, done := inv.obs.Phase(ctx, c.name, PhaseExec)
	if c.batch != nil {
		xctx = context.WithValue(xctx, batchKey{}, c.batch)
	}
	out, err := run(xctx, tool, &Call{Request: c.req, Input: rawIn, Spec: tool.Spec})
	done(err)
	if err != nil {
		return err
	}
	ev, err := inv.envelope(ctx, c, tool, out, resp)
	if err != nil {
		return err
	}
	ev.inDigest = inputDigestOf(inTree, fingerprint, fpErr)

	ectx, done := inv.obs.Phase(ctx, c.name, PhaseEvidence)
	err = inv.record(ectx, c, resp, ev)
	done(err)
	if err != nil {
		resp.OK, resp.Data = false, nil
	}
	return err
}

// toolCall is one call on its way through the invoker: what the caller
// gave, where it runs, and what the pipeline learnt before it ended — the
// spec of a registered tool (so its refusal can be evidenced), the input
// as JSON once valid, whether the handler ran (a failure before it is a
// refusal) and the size of its marshalled output.
type toolCall struct {
	name     string
	req      Request
	input    any
	call     CallContext
	start    time.Time
	batch    *Batch // stages the snapshot when set (InvokeIn)
	spec     *Spec
	rawIn    json.RawMessage
	ran      bool
	outBytes int
}

// logger is the invoker's logger with the call's identifying fields.
func (inv *Invoker) logger(c *toolCall) *zap.Logger {
	return inv.log.With(
		zap.String("tool", c.name),
		zap.String("request_id", c.req.RequestID),
		zap.String("session_hash", SessionHash(c.req.SessionID)),
		zap.String("correlation_id", c.req.CorrelationID),
		zap.String("workflow_id", c.call.WorkflowID),
		zap.String("activity_id", c.call.ActivityID),
		zap.Int32("iteration", c.call.Attempt),
	)
}

// lookup finds the registered tool and names its version and provider in
// the envelope; a disabled tool is FORBIDDEN (but known, so its refusal is
// evidenced).
func (inv *Invoker) lookup(c *toolCall, resp *Response) (*Tool, error) {
	tool, enabled := inv.reg.lookup(c.name)
	if tool == nil {
		return nil, Errorf(NotFound, "tool %s is not registered", c.name)
	}
	spec := tool.Spec
	resp.Version, resp.Meta.Provider = spec.Version, spec.Provider
	c.spec = &spec
	if !enabled {
		return nil, Errorf(Forbidden, "tool %s is disabled", c.name)
	}
	return tool, nil
}

// refused turns a failed pipeline into the envelope's error. A refusal is
// an answer like any other: it gets its evidence snapshot, and without one
// it is not given (the store's failure is infrastructure, retried).
func (inv *Invoker) refused(ctx context.Context, c *toolCall, resp *Response, err error) *Error {
	te := AsError(err)
	if te.Code == InvalidArgument && te.RecoverySuggestion == "" {
		// Every INVALID_ARGUMENT carries a suggestion
		// (docs/errors.md#error-object): the input is the caller's to fix.
		te.RecoverySuggestion = "fix the named fields and call again"
	}
	resp.OK, resp.Status, resp.Data, resp.Error = false, StatusError, nil, te
	if c.spec == nil || c.spec.Retry.Retries(te.Code) {
		return te
	}
	// A code the tool made final is an answer, not a retry.
	te.CanRetry = false
	ectx, done := inv.obs.Phase(ctx, c.name, PhaseEvidence)
	rerr := inv.recordRefusal(ectx, c, resp)
	done(rerr)
	if rerr != nil {
		te = AsError(rerr)
		resp.Error = te
	}
	return te
}

// outcome is what the observer learns of a finished call.
func (c *toolCall) outcome(resp *Response) Outcome {
	o := Outcome{Tool: c.name, Status: resp.Status, Origin: c.req.Actor.Type, BytesIn: len(c.rawIn), BytesOut: c.outBytes}
	if c.spec == nil {
		o.Tool = UnregisteredTool
	}
	if resp.Error != nil {
		o.Code, o.Denied = resp.Error.Code, !c.ran
	}
	return o
}

// inputJSON is the input a refusal's snapshot digests: the validated input,
// else the input as given (refused by preflight), else nothing.
func (c *toolCall) inputJSON() json.RawMessage {
	if c.rawIn != nil {
		return c.rawIn
	}
	if b, err := json.Marshal(c.input); err == nil && string(b) != "null" {
		return b
	}
	return nil
}

// envelope checks the handler's output against the tool's output schema,
// sanitises it and fills resp with the answer; it returns what record
// stores (all but the input digest, which the pipeline adds).
func (inv *Invoker) envelope(ctx context.Context, c *toolCall, tool *Tool, out *Output, resp *Response) (answerEvidence, error) {
	spec := tool.Spec
	_, done := inv.obs.Phase(ctx, c.name, PhaseValidate)
	rawOut, outTree, err := inv.validateOutput(tool, out)
	done(err)
	if err != nil {
		return answerEvidence{}, err
	}
	c.outBytes = len(rawOut)

	_, done = inv.obs.Phase(ctx, c.name, PhaseSanitize)
	clean, err := sanitizedOutput(rawOut, outTree)
	done(err)
	if err != nil {
		return answerEvidence{}, Errorf(UpstreamError, "sanitise output of %s: %v", c.name, err)
	}
	resp.Data = clean.json
	resp.Status = out.Status
	if resp.Status == "" {
		resp.Status = StatusOK
	}
	resp.OK = true
	resp.TTLSeconds = int(spec.TTL / time.Second)
	resp.Warnings = mergeWarnings(out.Warnings, clean.Warnings, c.req.DryRun)
	resp.Meta.CacheHit = out.CacheHit
	resp.Meta.RedactionApplied = clean.Changed
	resp.Meta.Tainted = out.Tainted || clean.Tainted || spec.Annotations.OpenWorld
	resp.Meta.RulesetVersion = out.RulesetVersion
	if out.Provider != "" {
		resp.Meta.Provider = out.Provider
	}
	hash, err := clean.hash()
	if err != nil {
		return answerEvidence{}, Errorf(UpstreamError, "hash output of %s: %v", c.name, err)
	}
	resp.Data = clean.json
	resp.Meta.OutputFingerprint = hash
	return answerEvidence{output: resp.Data, hash: hash, raw: rawOut, redacted: clean.Changed}, nil
}

// validateOutput marshals the tool's data and checks it against the
// tool's output schema; it returns the data as JSON and decoded, which
// sanitising walks.
func (inv *Invoker) validateOutput(tool *Tool, out *Output) (json.RawMessage, any, error) {
	name := tool.Spec.Name
	rawOut, err := json.Marshal(out.Data)
	if err != nil {
		return nil, nil, Errorf(UpstreamError, "tool %s returned data that is not JSON: %v", name, err)
	}
	tree, fields, err := validate(tool.output, rawOut)
	if err != nil || len(fields) > 0 {
		return nil, nil, Errorf(UpstreamError, "tool %s returned output that breaks its schema", name).
			WithDetail("fields", fields).WithRecovery("report the tool; its answer cannot be trusted")
	}
	return rawOut, tree, nil
}

// preflight checks the envelope, the caller and the input before the tool
// is ever called, and returns the input as JSON and decoded (the input
// digest sanitises the decoded form).
func (inv *Invoker) preflight(tool *Tool, req Request, input any) (json.RawMessage, any, error) {
	spec := tool.Spec
	if err := checkRequest(req, inv.reg.envelope); err != nil {
		return nil, nil, err
	}
	if !spec.Annotations.ReadOnly && req.IdempotencyKey == "" {
		return nil, nil, Errorf(InvalidArgument, "write tool %s needs an idempotency_key", spec.Name).
			WithDetail("fields", []string{"idempotency_key"})
	}
	if !actorAllowed(spec, req.Actor.Type) {
		return nil, nil, Errorf(Forbidden, "actor type %q may not call %s", req.Actor.Type, spec.Name)
	}
	if spec.NeedsConsent && !req.Consent {
		return nil, nil, Errorf(Forbidden, "%s needs the user's explicit consent", spec.Name).
			WithRecovery("ask the user for consent, then call again with consent=true")
	}
	rawIn, err := json.Marshal(input)
	if err != nil {
		return nil, nil, Errorf(InvalidArgument, "input is not JSON: %v", err)
	}
	if len(rawIn) == 0 || bytes.Equal(rawIn, []byte("null")) {
		rawIn = []byte("{}")
	}
	tree, fields, err := validate(tool.input, rawIn)
	if err != nil {
		return nil, nil, Errorf(InvalidArgument, "input of %s cannot be validated: %v", spec.Name, err)
	}
	if len(fields) > 0 {
		return nil, nil, Errorf(InvalidArgument, "input of %s is invalid: %v", spec.Name, fields).
			WithDetail("fields", fields).WithRecovery("fix the named fields and call again")
	}
	return rawIn, tree, nil
}

// run calls the handler under the tool's timeout and turns a panic or an
// untyped error into a code from the closed set.
func run(ctx context.Context, tool *Tool, call *Call) (out *Output, err error) {
	ctx, cancel := context.WithTimeout(ctx, tool.Spec.Timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, Errorf(UpstreamError, "tool %s panicked: %v", tool.Spec.Name, p)
		}
	}()
	out, err = tool.handler(ctx, call)
	if err != nil {
		var te *Error
		if errors.As(err, &te) {
			return nil, te
		}
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
			return nil, Errorf(Timeout, "tool %s did not answer within %s", tool.Spec.Name, tool.Spec.Timeout).WithCause(err)
		}
		return nil, Errorf(UpstreamError, "tool %s failed: %v", tool.Spec.Name, err).WithCause(err)
	}
	if out == nil {
		return nil, Errorf(UpstreamError, "tool %s returned no output", tool.Spec.Name)
	}
	return out, nil
}

// answerEvidence is what record stores of one answer or refusal.
type answerEvidence struct {
	// inDigest computes the input digest; without a sink it is never needed.
	inDigest func() (string, error)
	// output is what the envelope carries (the sanitised data or error
	// object) and hash its canonical hash.
	output json.RawMessage
	hash   string
	// raw is the output before sanitising, stored (encrypted) only when
	// sanitising changed it (redacted).
	raw      json.RawMessage
	redacted bool
}

// record stores the evidence snapshot of c's answer in resp and puts its
// id into the envelope.
func (inv *Invoker) record(ctx context.Context, c *toolCall, resp *Response, ev answerEvidence) error {
	spec := *c.spec
	if inv.sink == nil {
		if spec.EvidenceRequired {
			return Errorf(UpstreamError, "tool %s requires evidence and no evidence store is configured", spec.Name)
		}
		return nil
	}
	digest, err := ev.inDigest()
	if err != nil {
		return Errorf(UpstreamError, "digest input of %s: %v", spec.Name, err)
	}
	snap := Snapshot{
		Tool: spec.Name, ToolVersion: spec.Version, Build: inv.build, Call: c.call,
		RequestID: c.req.RequestID, CorrelationID: c.req.CorrelationID, UserID: c.req.UserID,
		InputDigest: digest, Output: ev.output, OutputHash: ev.hash,
		RulesetVersion: resp.Meta.RulesetVersion, TTL: spec.TTL, Status: resp.Status, CreatedAt: c.start.UTC(),
		TraceID: inv.obs.TraceID(ctx),
	}
	if ev.redacted {
		snap.RawOutput = ev.raw
	}
	rec, err := inv.recordStep(ctx, c.batch, snap)
	if err != nil {
		if te := (*Error)(nil); errors.As(err, &te) {
			return te
		}
		return Errorf(UpstreamError, "store evidence for %s: %v", spec.Name, err).WithCause(err)
	}
	id, hash, at := rec.SnapshotID, ev.hash, c.start
	if rec.Reused && rec.OutputHash != hash {
		if err := adopt(resp, rec); err != nil {
			return Errorf(UpstreamError, "%s: the step's stored answer %s: %v", spec.Name, id, err)
		}
		hash, at = rec.OutputHash, rec.CreatedAt
	}
	if id == "" {
		if spec.EvidenceRequired {
			return Errorf(UpstreamError, "tool %s requires evidence and none was stored", spec.Name)
		}
		return nil
	}
	resp.Evidence = &Evidence{SnapshotID: id, Sources: []Source{{
		Type: "tool", Name: spec.Name + "@" + spec.Version, Hash: hash, TS: at.UTC().Format(time.RFC3339Nano),
	}}}
	return nil
}

// recordStep stores snap through the sink, or stages it in b
// (docs/evidence.md#staged-batches).
func (inv *Invoker) recordStep(ctx context.Context, b *Batch, snap Snapshot) (Recorded, error) {
	if b != nil {
		return b.stage(ctx, snap)
	}
	return inv.sink.RecordStep(ctx, snap)
}

// adopt makes resp the answer the step's snapshot already holds: a step
// answered twice (a retried attempt, a local activity run again after a
// lost workflow task) answers what its evidence proves, not the newer
// output, whose timestamps may differ. A refusal's snapshot is its error
// object.
func adopt(resp *Response, rec Recorded) error {
	resp.Meta.OutputFingerprint = rec.OutputHash
	if !resp.OK {
		var e Error
		if err := json.Unmarshal(rec.Output, &e); err != nil {
			return err
		}
		e.cause = resp.Error.cause
		resp.Error = &e
		return nil
	}
	resp.Data, resp.Status, resp.Meta.RulesetVersion = rec.Output, rec.Status, rec.RulesetVersion
	return nil
}

func mergeWarnings(tool, sanitizer []string, dryRun bool) []string {
	seen := map[string]bool{}
	out := []string{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range tool {
		add(w)
	}
	for _, w := range sanitizer {
		add(w)
	}
	if dryRun {
		add(WarnDryRun)
	}
	return out
}

func actorAllowed(spec Spec, t ActorType) bool {
	if len(spec.AllowedActors) == 0 {
		return true
	}
	for _, a := range spec.AllowedActors {
		if a == t {
			return true
		}
	}
	return false
}

// missingFields names the mandatory envelope fields
// (docs/envelope.md#required-fields).
func (r Request) missingFields() []string {
	var missing []string
	if r.RequestID == "" {
		missing = append(missing, "request_id")
	}
	if r.Actor.Type == "" {
		missing = append(missing, "actor.type")
	}
	if r.Actor.ID == "" {
		missing = append(missing, "actor.id")
	}
	if r.UserID == "" {
		missing = append(missing, "user_id")
	}
	return missing
}

type callKey struct{}

// WithCall tells the invoker where in Temporal a call runs (the activity
// that carries it); the activities set it, so the invoker and the tools
// need no SDK. Evidence and audit rows record it.
func WithCall(ctx context.Context, c CallContext) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom is the CallContext WithCall set; zero outside an activity.
func CallFrom(ctx context.Context) CallContext {
	c, _ := ctx.Value(callKey{}).(CallContext)
	return c
}

// String renders a request for debugging without its PII-bearing fields.
func (r Request) String() string {
	return fmt.Sprintf("request{id=%s actor=%s:%s correlation=%s}", r.RequestID, r.Actor.Type, r.Actor.ID, r.CorrelationID)
}
