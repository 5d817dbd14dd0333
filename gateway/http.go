package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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

// Limits of the HTTP server (docs/mcp.md#transport-limits).
const (
	// ReadHeaderTimeout bounds the wait for a request's headers.
	ReadHeaderTimeout = 5 * time.Second
	// MaxHeaderBytes caps a request's head, its request line and header
	// lines as received: past it the gateway answers 431 (headerBytes).
	// Go's own cap, which it enforces with 4 KiB of read-ahead slack, is
	// set to the same value, so it never refuses a head within the cap.
	MaxHeaderBytes = 16 << 10
	// defaultBodyTimeout bounds the wait for a request's body.
	defaultBodyTimeout = 10 * time.Second
)

// HTTPServer is the gateway's HTTP server with its limits set: a
// half-sent header or body cannot hold a connection, and headers are
// capped. Serve it on a listener (`starter mcp serve`, the tests).
func (g *Gateway) HTTPServer() *http.Server {
	return &http.Server{
		Handler: g.Handler(), ReadHeaderTimeout: ReadHeaderTimeout, MaxHeaderBytes: MaxHeaderBytes,
		IdleTimeout: 2 * time.Minute,
	}
}

// Handler is the HTTP gateway: streamable HTTP at /mcp (the SDK's handler,
// stateless: any replica answers any request) behind a front handler that
// does, before anything runs, what the transport leaves to us
// (docs/mcp.md#http-status): the Host and Origin checks (DNS rebinding),
// throttling of failed authentications, one correlation id per request
// (taken from a valid X-Correlation-ID or made, and returned in the
// response header), the bearer token resolved to an actor (401 otherwise),
// bodies bounded in size and time and decoded with clear JSON-RPC errors
// (size, UTF-8, nesting, batch, shape, tools/call parameters, unknown
// tool, allow-list), and the legacy {"tool","arguments"} body routed like
// tools/call. A well-formed JSON-RPC request is always answered with its
// JSON-RPC response (HTTP 200), errors included, so any client reads
// error.data.
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

func (f *front) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if headerBytes(r) > MaxHeaderBytes {
		// Exactly the documented cap (docs/mcp.md#transport-limits), as
		// Go's server answers past its own: plain text, connection closed.
		rw.Header().Set("Connection", "close")
		http.Error(rw, "431 Request Header Fields Too Large", http.StatusRequestHeaderFieldsTooLarge)
		return
	}
	corr := wire.CorrelationFrom(r.Header.Get(wire.HeaderCorrelationID))
	rw.Header().Set(wire.HeaderCorrelationID, corr)
	// Whatever the SDK refuses as plain text is sent as a JSON-RPC error
	// with data (docs/mcp.md#error-data).
	w := &jsonErrors{ResponseWriter: rw, corr: corr}
	defer w.finish()
	var id json.RawMessage
	defer func() {
		if p := recover(); p != nil {
			f.g.log.Error("panic in the MCP front handler", zap.String("correlation_id", corr), zap.String("panic", fmt.Sprint(p)))
			writeError(w, http.StatusInternalServerError, id, wire.NewError(corr, wire.ReasonUnhandledPanic, nil, "internal error"))
		}
	}()
	ctx := withCorrelation(r.Context(), corr)
	r.Header.Set(wire.HeaderCorrelationID, corr) // the SDK hands headers to the method handlers

	actor, ok := f.admit(ctx, w, r, corr)
	if !ok {
		return
	}
	body, rerr := f.g.readBody(w, r, corr)
	if rerr != nil {
		status := http.StatusRequestTimeout
		if reasonOf(rerr) != wire.ReasonRequestTimeout {
			status = http.StatusBadRequest
		}
		dropBody(w)
		writeError(w, status, nil, rerr)
		return
	}
	in, bad := wire.Decode(body)
	if bad != nil {
		// A request with an id whose method or params are wrong is
		// answered (200); a body that is no request at all is the
		// transport's 400.
		e := wire.NewError(corr, bad.Reason, bad.Details, "%s", bad.Message)
		status := http.StatusBadRequest
		if bad.ID != nil && string(bad.ID) != "null" && (e.Code == wire.CodeMethodNotFound || e.Code == wire.CodeInvalidParams) {
			status = http.StatusOK
		}
		writeError(w, status, bad.ID, e)
		return
	}
	id = wire.ValidID(in.ID)
	if !in.Legacy && id != nil && !acceptsStreamable(r.Header.Values("Accept")) {
		writeError(w, http.StatusNotAcceptable, id, wire.NewError(corr, wire.ReasonNotAcceptable, nil,
			"Accept must list both application/json and text/event-stream"))
		return
	}
	ctx = withActor(ctx, actor)
	if in.Method == "tools/call" {
		if rerr := f.g.checkCall(corr, actor, in.Tool, in.Arguments); rerr != nil {
			writeError(w, http.StatusOK, id, rerr)
			return
		}
	}
	if in.Legacy {
		f.g.serveLegacy(ctx, w, in, corr)
		return
	}
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	f.next.ServeHTTP(w, r)
}

// readBody reads the body within the body timeout and the size limit,
// then lifts the deadline again: a tool call may stream its answer for
// longer, and an expired read deadline would cancel the request.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request, corr string) ([]byte, *jsonrpc.Error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.opts.BodyTimeout))
	body, err := io.ReadAll(io.LimitReader(r.Body, wire.MaxBodyBytes+1))
	_ = rc.SetReadDeadline(time.Time{})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, wire.NewError(corr, wire.ReasonRequestTimeout, map[string]any{"limit_seconds": int(g.opts.BodyTimeout / time.Second)},
			"the request body did not arrive within %s", g.opts.BodyTimeout)
	}
	if err != nil {
		return nil, wire.NewError(corr, wire.ReasonInvalidRequest, nil, "cannot read the request body")
	}
	return body, nil
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
		return Actor{}, wire.NewError(corr, wire.ReasonAuthFailed, nil, "unknown, revoked or expired token")
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
		writeError(w, http.StatusOK, nil, asRPCError(corr, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"correlation_id": corr, "isError": res.IsError, "result": res.StructuredContent, "content": res.Content,
	})
}

// writeError writes a JSON-RPC error response with an HTTP status: 200
// for an answer to a well-formed request, the transport's 4xx/5xx for a
// request that never became one (docs/mcp.md#http-status).
func writeError(w http.ResponseWriter, status int, id json.RawMessage, e error) {
	var je *jsonrpc.Error
	if !errors.As(e, &je) {
		je = wire.NewError(w.Header().Get(wire.HeaderCorrelationID), wire.ReasonInternalError, nil, "internal error")
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, je})
}

// reasonOf is error.data.reason of a gateway error.
func reasonOf(e *jsonrpc.Error) wire.Reason {
	var d wire.ErrorData
	_ = json.Unmarshal(e.Data, &d)
	return d.Reason
}

func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// acceptsStreamable: the transport's client MUST accept both
// application/json and text/event-stream (a wildcard does too).
func acceptsStreamable(values []string) bool {
	var jsonOK, streamOK bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// headerBytes is the size of r's head as it came over the wire: the
// request line, each header line ("Name: value\r\n", Host included) and
// the blank line that ends them. Go trims the optional spaces around a
// value, so a head padded with them counts a few bytes short.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2 + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n
}
