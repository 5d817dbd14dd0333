package gateway

import (
	"context"
	"fmt"
	"io/fs"
	"net/netip"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/gateway/wire"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Options build a Gateway.
type Options struct {
	// Client runs the tool calls and draft orders on Temporal.
	Client *client.Client
	// Tokens resolves bearer tokens to actors.
	Tokens *Tokens
	// Specs are the registry's ToolSpecs (a worker's ListTools, or a
	// registry's Specs()); Schemas is the folder they name (schemas.FS).
	Specs   []toolkit.Spec
	Schemas fs.FS
	// Config fills the draft order's windows (as the starter does).
	Config config.Config
	Logger *zap.Logger
	// CallTimeout bounds the wait for one tool call's envelope (default 60 s).
	CallTimeout time.Duration
	// ProgressEvery is the interval of progress notifications during a
	// long wait (default 2 s).
	ProgressEvery time.Duration
	// AllowedOrigins are the browser origins (scheme://host[:port]) that
	// may call /mcp; a request with another Origin header is 403. A
	// request without one (not a browser) passes (docs/mcp.md#transport-checks).
	AllowedOrigins []string
	// AllowedHosts are the Host header values served; empty: any, except
	// that a request to a loopback address must name a loopback host.
	AllowedHosts []string
	// BodyTimeout bounds the wait for a request's body (default 10 s).
	BodyTimeout time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client failed authentications are counted against; without
	// them every client behind a proxy would share its address.
	TrustedProxies []netip.Prefix
	// AuthFailureBurst and AuthFailureRefill throttle failed
	// authentications per client (default 10, then one per 6 s).
	AuthFailureBurst  int
	AuthFailureRefill time.Duration
	// Direct, when set, answers read-only tool calls without a workflow
	// (docs/mcp.md#direct-reads); nil runs every call as a ToolCall.
	Direct *DirectReads
}

// Gateway is the MCP server over cartwright's tools. Safe for concurrent use.
type Gateway struct {
	opts    Options
	log     *zap.Logger
	specs   map[string]toolkit.Spec
	server  *mcp.Server
	budgets *budgets
	// authFailures throttles clients that fail to authenticate.
	authFailures *authThrottle
	// names are every tool the gateway serves: the registry's and the
	// draft order's.
	names map[string]bool
	// handlers serve each tool (the legacy body calls them directly).
	handlers map[string]mcp.ToolHandler
	// direct are the read tools answered without a workflow, by name,
	// with the gateway's own spec of each (directTools).
	direct map[string]toolkit.Spec
	// stdioActor is the one actor of a stdio process; stdioAuthErr the
	// refusal of a stdio process whose token did not resolve.
	stdioActor   *Actor
	stdioAuthErr func(corr string) *jsonrpc.Error
}

// Name and Version are the gateway's MCP implementation.
const (
	Name    = "cartwright"
	Version = "1.0.0"
)

// New builds the gateway: one MCP tool per spec, plus the draft order tools.
func New(opts Options) (*Gateway, error) {
	if opts.Client == nil || opts.Tokens == nil || opts.Schemas == nil {
		return nil, fmt.Errorf("gateway: a client, a token table and the schemas are required")
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 60 * time.Second
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 2 * time.Second
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = defaultBodyTimeout
	}
	if opts.AuthFailureBurst <= 0 {
		opts.AuthFailureBurst = authFailureBurst
	}
	if opts.AuthFailureRefill <= 0 {
		opts.AuthFailureRefill = authFailureRefill
	}
	g := &Gateway{
		opts: opts, log: opts.Logger, specs: map[string]toolkit.Spec{}, budgets: newBudgets(),
		authFailures: newAuthThrottle(opts.AuthFailureBurst, opts.AuthFailureRefill),
		names:        map[string]bool{}, handlers: map[string]mcp.ToolHandler{},
		direct: directTools(opts.Direct, opts.Specs),
	}
	g.server = mcp.NewServer(&mcp.Implementation{Name: Name, Title: "cartwright commerce tools", Version: Version},
		&mcp.ServerOptions{
			Instructions: "Commerce tools (pricing, shipping, tax and duties, compliance, checkout) and Stripe " +
				"onboarding tools. Write tools need an idempotency_key: the same key returns the same answer. " +
				"Results carry the response envelope in structuredContent; isError results say how to recover. " +
				"To place an order use draft_order.start, show the user the total it returns, and on their OK call " +
				"draft_order.confirm with the quote_hash.",
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})
	specs := append([]toolkit.Spec(nil), opts.Specs...)
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	for _, spec := range specs {
		if spec.Internal {
			// Never listed, so never callable: docs/quote-seals.md#internal-tools.
			continue
		}
		t, err := mcpTool(spec, opts.Schemas)
		if err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		g.specs[spec.Name] = spec
		g.names[spec.Name] = true
		g.handlers[spec.Name] = g.toolHandler(spec)
		g.server.AddTool(t, g.handlers[spec.Name])
	}
	for _, dt := range g.draftOrderTools() {
		g.names[dt.tool.Name] = true
		g.handlers[dt.tool.Name] = dt.handler
		g.server.AddTool(dt.tool, dt.handler)
	}
	g.server.AddReceivingMiddleware(g.middleware)
	return g, nil
}

// ToolNames lists every tool the gateway serves, sorted.
func (g *Gateway) ToolNames() []string {
	out := make([]string, 0, len(g.names))
	for n := range g.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ServeStdio speaks MCP on stdin/stdout for actor until the peer hangs up.
// The actor was resolved from a token once, at start. Without one every
// call is refused, so the host shows why instead of a dead process:
// ACTOR_UNKNOWN when no token was given, AUTH_FAILED (why) when it did not
// resolve.
func (g *Gateway) ServeStdio(ctx context.Context, actor *Actor, tokenGiven bool, why string) error {
	reason := wire.ReasonActorUnknown
	if tokenGiven {
		reason = wire.ReasonAuthFailed
	}
	if actor != nil {
		g.stdioActor = actor
	} else {
		g.stdioAuthErr = func(corr string) *jsonrpc.Error { return wire.NewError(corr, reason, nil, "%s", why) }
	}
	return g.server.Run(ctx, &mcp.StdioTransport{})
}
