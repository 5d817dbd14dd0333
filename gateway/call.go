package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/gateway/wire"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// toolHandler serves one registry tool.
func (g *Gateway) toolHandler(spec toolkit.Spec) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		actor, _ := actorOf(ctx)
		corr := correlationOf(ctx)
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			_ = json.Unmarshal(req.Params.Arguments, &args) // checked by the middleware
		}
		env, rerr := g.call(ctx, actor, corr, spec, args, len(req.Params.Arguments), progressOf(ctx, req))
		if rerr != nil {
			return nil, rerr
		}
		return toolResult(env, corr), nil
	}
}

// call runs one tool durably for actor and returns its envelope: a failed
// call is an envelope with ok false (a business outcome the model can act
// on). Only what is not a tool result — Temporal unreachable — is a
// JSON-RPC error.
func (g *Gateway) call(ctx context.Context, actor Actor, corr string, spec toolkit.Spec, args map[string]any,
	payload int, progress func(string)) (toolkit.Response, *jsonrpc.Error) {
	log := g.log.With(zap.String("tool", spec.Name), zap.String("actor_id", actor.ID), zap.String("correlation_id", corr))
	fail := func(e *toolkit.Error) toolkit.Response {
		log.Info("mcp tool call refused", zap.String("error_code", string(e.Code)))
		return failed(spec, e)
	}
	if refused := g.budgets.spend(actor, payload, time.Now()); refused != nil {
		return fail(refused), nil
	}
	input, key, dryRun, bad := splitArguments(args)
	if bad != nil {
		return fail(bad), nil
	}
	if !spec.Annotations.ReadOnly && key == "" {
		return fail(toolkit.Errorf(toolkit.InvalidArgument, "%s writes: idempotency_key is required", spec.Name).
			WithDetail("fields", []string{"idempotency_key: required for a write tool"}).
			WithRecovery("generate a key (e.g. a UUID) for this one action and keep it for retries")), nil
	}
	raw, _ := json.Marshal(input)
	call := toolkit.ToolCall{
		Tool: spec.Name,
		Request: toolkit.Request{
			// A fresh request id: a caller may send the same
			// X-Correlation-ID twice, and only an idempotency key may
			// bring back an earlier answer.
			RequestID: "req-" + strings.TrimPrefix(toolkit.NewCorrelationID(), "corr-"),
			Actor:     actor.envelopeActor(), UserID: actor.UserID(), Tenant: actor.Tenant,
			DryRun: dryRun, CorrelationID: corr,
		},
		Input: raw,
	}
	// The key names the tool call workflow: a retried call attaches to the
	// same run. A read tool's key is its request id (idempotency keys are
	// scoped to writes: docs/envelope.md#idempotency).
	if key != "" {
		if spec.Annotations.ReadOnly {
			call.Request.RequestID = key
		} else {
			call.Request.IdempotencyKey = key
		}
	}
	var env toolkit.Response
	var err error
	started := true
	if local, ok := g.direct[spec.Name]; ok {
		env, err = g.runDirect(ctx, local, call, key != "") // docs/mcp.md#direct-reads
	} else {
		env, started, err = g.runDurably(ctx, call, progress)
	}
	if err != nil {
		te := toolkit.AsError(err)
		if !started && (te.Code == toolkit.UpstreamError || te.Code == toolkit.Timeout) {
			log.Warn("mcp tool call: Temporal unreachable", zap.Error(err))
			return toolkit.Response{}, wire.NewError(corr, wire.ReasonTemporalUnavailable, nil, "the workflow service cannot be reached; retry")
		}
		return fail(te), nil
	}
	if env.Tool != "" && env.Tool != spec.Name {
		// The key already named a call of another tool: never hand one
		// tool's answer back as another's.
		return fail(toolkit.Errorf(toolkit.Conflict, "idempotency_key already used for %s", env.Tool).
			WithRecovery("use a new idempotency_key for a different call")), nil
	}
	log.Info("mcp tool call done", zap.Bool("ok", env.OK), zap.String("status", string(env.Status)),
		zap.String("snapshot_id", env.SnapshotID()))
	return env, nil
}

// runDurably starts (or attaches to) the tool call workflow and waits for
// its envelope, sending progress while it waits. started says whether the
// workflow was reached at all.
func (g *Gateway) runDurably(ctx context.Context, call toolkit.ToolCall, progress func(string)) (toolkit.Response, bool, error) {
	type answer struct {
		env     toolkit.Response
		started bool
		err     error
	}
	done := make(chan answer, 1)
	go func() {
		env, h, err := g.opts.Client.CallTool(ctx, call, time.Now().Add(g.opts.CallTimeout))
		done <- answer{env, h.WorkflowID != "", err}
	}()
	tick := time.NewTicker(g.opts.ProgressEvery)
	defer tick.Stop()
	waited := 0
	for {
		select {
		case a := <-done:
			return a.env, a.started, a.err
		case <-tick.C:
			waited++
			progress(fmt.Sprintf("%s still running (%ds)", call.Tool, waited*int(g.opts.ProgressEvery/time.Second)))
		}
	}
}

// failed is the envelope of a call that did not succeed.
func failed(spec toolkit.Spec, e *toolkit.Error) toolkit.Response {
	return toolkit.Response{OK: false, Status: toolkit.StatusError, Tool: spec.Name, Version: spec.Version,
		Warnings: []string{}, Error: e}
}

// toolResult renders an envelope as an MCP tool result: the envelope as
// structuredContent, a short text for hosts that show only content, and
// isError for a call that did not succeed.
func toolResult(env toolkit.Response, corr string) *mcp.CallToolResult {
	if env.Warnings == nil {
		env.Warnings = []string{}
	}
	isError := !env.OK || env.Status == toolkit.StatusError
	return &mcp.CallToolResult{
		Meta:              mcp.Meta{"correlation_id": corr},
		Content:           []mcp.Content{&mcp.TextContent{Text: envelopeText(env)}},
		StructuredContent: env,
		IsError:           isError,
	}
}

// maxTextData bounds the data quoted in the text content.
const maxTextData = 2000

func envelopeText(env toolkit.Response) string {
	var b strings.Builder
	if env.Error != nil {
		fmt.Fprintf(&b, "%s failed: %s: %s", env.Tool, env.Error.Code, env.Error.Message)
		if env.Error.RecoverySuggestion != "" {
			fmt.Fprintf(&b, "\nrecovery: %s", env.Error.RecoverySuggestion)
		}
		if env.Error.RetryAfterSeconds > 0 {
			fmt.Fprintf(&b, "\nretry after %d s", env.Error.RetryAfterSeconds)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s: %s", env.Tool, env.Status)
	if id := env.SnapshotID(); id != "" {
		fmt.Fprintf(&b, " (evidence %s)", id)
	}
	if len(env.Warnings) > 0 {
		fmt.Fprintf(&b, "; warnings: %s", strings.Join(env.Warnings, ", "))
	}
	if len(env.Data) > 0 {
		data := string(env.Data)
		if len(data) > maxTextData {
			// Cut on a byte, then drop a rune the cut split.
			data = strings.ToValidUTF8(data[:maxTextData], "") + "… (truncated; the whole answer is in structuredContent)"
		}
		b.WriteString("\n" + data)
	}
	return b.String()
}

// progressOf returns a func that sends a progress notification when the
// caller asked for them (a progress token), else does nothing.
// They are sent on ctx, the request's: the streamable transport delivers
// a notification on the stream of the request it belongs to.
func progressOf(ctx context.Context, req *mcp.CallToolRequest) func(string) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func(string) {}
	}
	n := 0
	return func(msg string) {
		n++
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Message: msg, Progress: float64(n),
		})
	}
}
