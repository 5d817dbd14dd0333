package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/gateway/wire"
)

type actorKey struct{}

func withActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

func actorOf(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// tokenInfoActor is the TokenInfo.Extra key under which the HTTP front
// handler hands the resolved actor to the SDK's session.
const tokenInfoActor = "cartwright_actor"

// open methods need no actor: the handshake and liveness.
func openMethod(method string) bool {
	return method == "initialize" || method == "server/discover" || method == "ping" ||
		strings.HasPrefix(method, "notifications/")
}

// middleware runs around every method the SDK dispatches, over HTTP and
// stdio alike: it fixes the request's correlation id and actor, checks
// tools/call's parameters and the actor's allow-list before anything runs,
// filters tools/list to what the actor may call, and turns every error
// into a JSON-RPC error with its error.data (docs/mcp.md#error-data;
// never code 0 or -32000).
func (g *Gateway) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		extra := req.GetExtra()
		corr := ""
		if extra != nil && extra.Header != nil {
			corr = extra.Header.Get(wire.HeaderCorrelationID)
		}
		corr = wire.CorrelationFrom(corr)
		ctx = withCorrelation(ctx, corr)
		defer func() {
			if p := recover(); p != nil {
				g.log.Error("panic in MCP handler", zap.String("method", method), zap.String("correlation_id", corr),
					zap.String("panic", fmt.Sprint(p)))
				res, err = nil, wire.NewError(corr, wire.ReasonUnhandledPanic, nil, "internal error")
			}
		}()
		if !openMethod(method) {
			actor, rerr := g.requestActor(ctx, extra, corr)
			if rerr != nil {
				return nil, rerr
			}
			ctx = withActor(ctx, actor)
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				if rerr := g.checkCall(corr, actor, p.Name, p.Arguments); rerr != nil {
					return nil, rerr
				}
			}
		}
		res, err = next(ctx, method, req)
		if err != nil {
			return nil, asRPCError(corr, err)
		}
		if lt, ok := res.(*mcp.ListToolsResult); ok {
			actor, _ := actorOf(ctx)
			kept := lt.Tools[:0:0]
			for _, t := range lt.Tools {
				if actor.Allows(t.Name) {
					kept = append(kept, t)
				}
			}
			out := *lt
			out.Tools = kept
			res = &out
		}
		return res, nil
	}
}

// requestActor is the actor of an HTTP request (set by the front handler
// from the bearer token) or of the stdio process.
func (g *Gateway) requestActor(ctx context.Context, extra *mcp.RequestExtra, corr string) (Actor, *jsonrpc.Error) {
	if extra != nil && extra.TokenInfo != nil {
		if a, ok := extra.TokenInfo.Extra[tokenInfoActor].(Actor); ok {
			return a, nil
		}
	}
	if a, ok := actorOf(ctx); ok {
		return a, nil
	}
	if g.stdioActor != nil {
		return *g.stdioActor, nil
	}
	if g.stdioAuthErr != nil {
		return Actor{}, g.stdioAuthErr(corr)
	}
	return Actor{}, wire.NewError(corr, wire.ReasonAuthFailed, nil, "a bearer token is required")
}

// checkCall is the parameter check of tools/call (MCP-INV-03,
// docs/mcp.md#mcp-invariants), then the actor's allow-list.
func (g *Gateway) checkCall(corr string, actor Actor, name string, args json.RawMessage) *jsonrpc.Error {
	if name == "" {
		return wire.NewError(corr, wire.ReasonMissingRequiredParam, map[string]any{"param": "name"}, "missing required parameter: name")
	}
	if !g.names[name] {
		return wire.NewError(corr, wire.ReasonUnknownTool, map[string]any{"tool": name}, "unknown tool %q", name)
	}
	if len(args) > 0 && string(args) != "null" {
		var m map[string]any
		if json.Unmarshal(args, &m) != nil {
			return wire.NewError(corr, wire.ReasonInvalidParamType, map[string]any{"param": "arguments"}, "arguments must be an object")
		}
	}
	if !actor.Allows(name) {
		return wire.NewError(corr, wire.ReasonPolicyReject, map[string]any{"tool": name, "actor_id": actor.ID},
			"actor %s may not call %s", actor.ID, name)
	}
	return nil
}

// asRPCError keeps a gateway error and maps the SDK's own into the table.
func asRPCError(corr string, err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		if len(je.Data) > 0 {
			return je
		}
		switch je.Code {
		case wire.CodeParseError:
			return wire.NewError(corr, wire.ReasonParseError, nil, "%s", je.Message)
		case wire.CodeInvalidRequest:
			return wire.NewError(corr, wire.ReasonInvalidRequest, nil, "%s", je.Message)
		case wire.CodeMethodNotFound:
			return wire.NewError(corr, wire.ReasonMethodNotFound, nil, "%s", je.Message)
		case wire.CodeInvalidParams:
			return wire.NewError(corr, wire.ReasonInvalidParamValue, nil, "%s", je.Message)
		}
	}
	return wire.NewError(corr, wire.ReasonInternalError, nil, "internal error")
}
