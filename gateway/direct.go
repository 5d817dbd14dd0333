package gateway

import (
	"context"
	"encoding/json"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// DirectReads answers read-only tool calls without a workflow
// (docs/mcp.md#direct-reads): the gateway runs the tool through the invoker
// itself and writes its evidence snapshot, bound to the call's key, in one
// statement (docs/evidence.md#direct-calls). A read changes nothing, so a
// workflow's durability adds nothing to it; what it must keep — one
// pipeline, evidence for every answer, the same answer under the same key,
// CONFLICT under the same key with other arguments — it keeps here.
type DirectReads struct {
	// Invoker is a registry holding the tools (worker/wiring builds the
	// worker's) with the evidence store as its sink; Evidence is that store.
	Invoker  *toolkit.Invoker
	Evidence *evidence.Store
}

// directTools are the tools the gateway answers itself: read-only, not
// internal, and registered here at the version the worker serves (a
// gateway of another build sends the call to the worker).
func directTools(d *DirectReads, served []toolkit.Spec) map[string]toolkit.Spec {
	out := map[string]toolkit.Spec{}
	if d == nil || d.Invoker == nil || d.Evidence == nil {
		return out
	}
	for _, spec := range served {
		local, ok := d.Invoker.Registry().Spec(spec.Name)
		if ok && spec.Annotations.ReadOnly && !spec.Internal && local.Annotations.ReadOnly && !local.Internal &&
			local.Version == spec.Version {
			out[spec.Name] = local
		}
	}
	return out
}

// runDirect answers call (a read tool's; keyed when the caller gave an
// idempotency key, which is then its request id) with the same contract
// as the tool-call workflow: an envelope for every answer, the answer kept
// under the key by the same rule (toolkit.Response.KeepsKey), CONFLICT for
// the key with other arguments. It makes one attempt: a failure worth
// retrying is answered as such (can_retry), writes nothing and leaves the
// key free; retrying is the caller's, as over the workflow once the tool's
// retries are spent (docs/mcp.md#direct-reads). An input its schema refuses
// writes nothing and keeps nothing (docs/envelope.md#idempotency).
func (g *Gateway) runDirect(ctx context.Context, spec toolkit.Spec, call toolkit.ToolCall, keyed bool) (toolkit.Response, error) {
	d := g.opts.Direct
	if err := toolkit.BuiltinSchemas().CheckToolInput(call.Tool, call.Input, nil); err != nil {
		return toolkit.ErrorResponse(call.Tool, spec.Version, err), err
	}
	fp, err := toolcall.Fingerprint(call)
	if err != nil {
		err = toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
		return toolkit.ErrorResponse(call.Tool, spec.Version, err), err
	}
	key := call.Request.RequestID
	if keyed {
		chain := evidence.DirectChainKey(evidence.HashUserID(call.Request.UserID), key)
		kept, found, err := d.Evidence.LookupDirect(ctx, chain)
		if err != nil {
			return toolkit.ErrorResponse(call.Tool, spec.Version, err), err
		}
		if found {
			return keptAnswer(call.Tool, key, fp, kept)
		}
	}
	env, kept := g.directOnce(ctx, spec, call, fp)
	if kept != nil {
		return keptAnswer(call.Tool, key, fp, *kept)
	}
	return env, nil
}

// directOnce is the call: activities.CallIn, the function every tool
// activity runs the tool with, stages its snapshot, then the snapshot and
// (for an answer its key keeps) its binding to the key are written in one
// statement. kept is the answer another call with the same key wrote first.
func (g *Gateway) directOnce(ctx context.Context, spec toolkit.Spec, call toolkit.ToolCall, fp string) (toolkit.Response, *evidence.DirectAnswer) {
	d := g.opts.Direct
	b := d.Invoker.NewBatch()
	cannotStage := toolkit.Errorf(toolkit.UpstreamError, "the gateway's evidence sink cannot stage snapshots")
	if b == nil {
		return toolkit.ErrorResponse(call.Tool, spec.Version, cannotStage), nil
	}
	cctx := toolkit.WithCall(ctx, toolkit.CallContext{ActivityType: evidence.DirectActivityType})
	resp, err := activities.CallIn(cctx, d.Invoker, b, call.Tool, call.Request, json.RawMessage(call.Input))
	steps := b.Take()
	if err != nil {
		// A failure worth retrying: nothing is written, the key stays free.
		return toolkit.ErrorResponse(call.Tool, spec.Version, err), nil
	}
	if len(steps) == 0 && resp.SnapshotID() != "" {
		// The sink wrote the snapshot itself: no binding to the key.
		return toolkit.ErrorResponse(call.Tool, spec.Version, cannotStage), nil
	}
	if len(steps) != 1 {
		// No snapshot (a tool the registry does not have): nothing to keep.
		return resp, nil
	}
	c, cerr := d.Evidence.CommitDirect(ctx, steps[0], fp, resp, resp.KeepsKey())
	if cerr != nil {
		te := toolkit.AsError(cerr)
		if !te.Code.Retryable() {
			te = toolkit.Errorf(toolkit.UpstreamError, "store evidence for %s: %v", call.Tool, cerr).WithCause(cerr)
		}
		return toolkit.ErrorResponse(call.Tool, resp.Version, te), nil
	}
	if c.Kept != nil {
		return toolkit.Response{}, c.Kept
	}
	if c.Reused && resp.Evidence != nil {
		resp.Evidence.SnapshotID = c.SnapshotID // the same refusal, made before with these arguments
	}
	return resp, nil
}

// keptAnswer is the answer kept under the key when the call is the same
// request (its fingerprint), else the CONFLICT of a key reused with other
// arguments.
func keptAnswer(tool, key, fp string, kept evidence.DirectAnswer) (toolkit.Response, error) {
	if kept.Fingerprint != fp {
		err := client.KeyConflict(tool, key, kept.Fingerprint, "")
		return toolkit.ErrorResponse(tool, "", err), err
	}
	return kept.Envelope, nil
}
