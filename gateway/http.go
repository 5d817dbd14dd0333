package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/gateway/wire"
)

// Path is where the HTTP gateway serves MCP.
const Path = "/mcp"

// Handler is the HTTP gateway: streamable HTTP at /mcp (the SDK's handler,
// stateless: any replica answers any request) behind a front handler that
// does, before anything runs, what docs/mcp.md asks of the entry: one
// correlation id per request (taken from a valid X-Correlation-ID or made,
// and returned in the response header), the bearer token resolved to an
// actor (-32002 AUTH_FAILED otherwise), bodies bounded and decoded with
// clear JSON-RPC errors (size, UTF-8, nesting, batch, shape, tools/call
// parameters, unknown tool, allow-list), and the legacy {"tool","arguments"}
// body routed like tools/call.
func (g *Gateway) Handler() http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server },
		&mcp.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: wire.MaxBodyBytes})
	// The SDK reads the actor the front handler resolved as the session's
	// token info, so it reaches every method handler (RequestExtra).
	withToken := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		a, ok := actorOf(ctx)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: a.TokenID, Expiration: time.Now().Add(time.Hour),
			Extra: map[string]any{tokenInfoActor: a}}, nil
	}, nil)(sdk)
	mux := http.NewServeMux()
	mux.Handle(Path, &front{g: g, next: withToken})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return mux
}

type front struct {
	g    *Gateway
	next http.Handler
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	corr := wire.CorrelationFrom(r.Header.Get(wire.HeaderCorrelationID))
	w.Header().Set(wire.HeaderCorrelationID, corr)
	var id json.RawMessage
	defer func() {
		if p := recover(); p != nil {
			f.g.log.Error("panic in the MCP front handler", zap.String("correlation_id", corr), zap.String("panic", fmt.Sprint(p)))
			writeRPCError(w, id, wire.NewError(corr, wire.ReasonUnhandledPanic, nil, "internal error"))
		}
	}()
	ctx := withCorrelation(r.Context(), corr)
	r.Header.Set(wire.HeaderCorrelationID, corr) // the SDK hands headers to the method handlers

	actor, rerr := f.g.authenticate(ctx, r.Header.Get("Authorization"), corr)
	var body []byte
	var in wire.Inbound
	if r.Method == http.MethodPost {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, wire.MaxBodyBytes+1))
		if err != nil {
			writeRPCError(w, nil, wire.NewError(corr, wire.ReasonInvalidRequest, nil, "cannot read the request body"))
			return
		}
		var bad *wire.Failure
		in, bad = wire.Decode(body)
		if bad != nil {
			writeRPCError(w, bad.ID, wire.NewError(corr, bad.Reason, bad.Details, "%s", bad.Message))
			return
		}
		id = wire.ValidID(in.ID)
	}
	if rerr != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cartwright-mcp"`)
		writeRPCError(w, id, rerr)
		return
	}
	ctx = withActor(ctx, actor)
	if in.Method == "tools/call" {
		if rerr := f.g.checkCall(corr, actor, in.Tool, in.Arguments); rerr != nil {
			writeRPCError(w, id, rerr)
			return
		}
	}
	if in.Legacy {
		f.g.serveLegacy(ctx, w, in, corr)
		return
	}
	r = r.WithContext(ctx)
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	f.next.ServeHTTP(w, r)
}

// authenticate resolves "Bearer <token>" to its actor.
func (g *Gateway) authenticate(ctx context.Context, header, corr string) (Actor, *jsonrpc.Error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return Actor{}, wire.NewError(corr, wire.ReasonAuthFailed, nil, "a bearer token is required (Authorization: Bearer …)")
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	a, err := g.opts.Tokens.Lookup(lctx, token)
	switch {
	case errors.Is(err, ErrUnknownToken):
		g.log.Info("mcp token refused", zap.String("correlation_id", corr))
		return Actor{}, wire.NewError(corr, wire.ReasonAuthFailed, nil, "unknown or revoked token")
	case err != nil:
		g.log.Warn("mcp token lookup failed", zap.String("correlation_id", corr), zap.Error(err))
		return Actor{}, wire.NewError(corr, wire.ReasonDatabaseUnavailable, nil, "the token store cannot be reached; retry")
	}
	return a, nil
}

// serveLegacy answers the legacy body with the same call path as
// tools/call: {"correlation_id", "isError", "result"} where result is the
// tool result's structuredContent.
func (g *Gateway) serveLegacy(ctx context.Context, w http.ResponseWriter, in wire.Inbound, corr string) {
	h := g.handlers[in.Tool]
	res, err := h(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: in.Tool, Arguments: in.Arguments}})
	if err != nil {
		writeRPCError(w, nil, asRPCError(corr, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"correlation_id": corr, "isError": res.IsError, "result": res.StructuredContent, "content": res.Content,
	})
}

// writeRPCError writes a JSON-RPC error response with the HTTP status its
// category calls for.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, e error) {
	var je *jsonrpc.Error
	if !errors.As(e, &je) {
		je = wire.NewError(w.Header().Get(wire.HeaderCorrelationID), wire.ReasonInternalError, nil, "internal error")
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	status := http.StatusBadRequest
	switch je.Code {
	case wire.CodeMethodNotFound:
		status = http.StatusNotFound
	case wire.CodeBusiness:
		status = http.StatusForbidden
		var d wire.ErrorData
		if json.Unmarshal(je.Data, &d) == nil && d.Reason == wire.ReasonAuthFailed {
			status = http.StatusUnauthorized
		}
	case wire.CodeDependency:
		status = http.StatusServiceUnavailable
	case wire.CodeInternal:
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, je})
}
