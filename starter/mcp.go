package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/logging"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

func (a *app) mcpCmd() *cobra.Command {
	return group("mcp", "Serve every tool to agents over MCP, and manage their tokens",
		`The MCP gateway lets agents list and call every tool (and start, confirm or
cancel draft orders) over the Model Context Protocol. Each call runs durably as
the tool call workflow, with the invoker pipeline and its evidence.

  starter mcp serve            streamable HTTP at http://CARTWRIGHT_MCP_ADDR/mcp
  starter mcp stdio            MCP on stdin/stdout, for a local agent host
  starter mcp token create     a bearer token for an agent (printed once)
  starter mcp token list       the tokens: id, actor, tenant, tools, expiry, last use
  starter mcp token revoke     end a token

Needs Temporal (TEMPORAL_*), a worker on CARTWRIGHT_TASK_QUEUE (its registry is
the tool list) and PostgreSQL (CARTWRIGHT_PG_DSN: the token table, read only;
the token commands issue as CARTWRIGHT_PG_ISSUER_DSN).`,
		a.mcpServeCmd(), a.mcpStdioCmd(), a.mcpTokenCmd())
}

// gatewayProcess is what serve and stdio share: the logger, the pool, the
// client, the worker's tool list, and the gateway built on them.
type gatewayProcess struct {
	cfg    config.Config
	log    *zap.Logger
	gw     *gateway.Gateway
	tokens *gateway.Tokens
	close  func()
}

func (a *app) openGateway(ctx context.Context) (*gatewayProcess, error) {
	if os.Getenv("GOGC") == "" {
		// The gateway's garbage is short-lived request data and its live
		// heap small: a collection every 5× the live heap instead of 2×
		// cut its CPU per call by a fifth (docs/performance.md#garbage-collection-and-compression).
		debug.SetGCPercent(gatewayGCPercent)
	}
	cfg, err := config.Load()
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	logger, err := logging.NewLogger(cfg.LogLevel, cfg.LogDevelopment) // stderr: stdout may be the protocol
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	pool, err := db.Open(ctx, cfg.PostgresDSN, db.MaxConns(cfg.PostgresMaxConns))
	if err != nil {
		return nil, toolkit.Errorf(toolkit.UpstreamError, "%v", err)
	}
	opts, err := client.OptionsFromEnv()
	if err != nil {
		pool.Close()
		return nil, err
	}
	opts.AckTimeout = a.clientOpts.AckTimeout
	opts.Logger = logger.Named("temporal")
	dctx, dcancel := context.WithTimeout(ctx, a.timeout)
	defer dcancel()
	c, err := client.New(dctx, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	specs, err := listToolsPatiently(ctx, c, a.timeout)
	if err != nil {
		c.Close()
		pool.Close()
		return nil, err
	}
	tokens := gateway.NewTokens(pool)
	proxies, err := parsePrefixes(cfg.MCPTrustedProxies)
	if err != nil {
		c.Close()
		pool.Close()
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "CARTWRIGHT_MCP_TRUSTED_PROXIES: %v", err)
	}
	gw, err := gateway.New(gateway.Options{
		Client: c, Tokens: tokens, Specs: specs, Schemas: schemas.FS, Config: cfg, Logger: logger.Named("mcp"),
		AllowedOrigins: cfg.MCPAllowedOrigins, AllowedHosts: cfg.MCPAllowedHosts, TrustedProxies: proxies,
		Direct: a.directReads(ctx, cfg, pool, logger),
	})
	if err != nil {
		c.Close()
		pool.Close()
		return nil, err
	}
	return &gatewayProcess{cfg: cfg, log: logger, gw: gw, tokens: tokens,
		close: func() { c.Close(); pool.Close(); _ = logger.Sync() }}, nil
}

// gatewayGCPercent is the gateway's GOGC unless the environment sets one.
const gatewayGCPercent = 400

// directReads builds the tools the gateway answers read-only calls with
// (docs/mcp.md#direct-reads), or nil when CARTWRIGHT_MCP_DIRECT_READS is
// false or they cannot be built (then every call goes to the worker, as
// the log says).
func (a *app) directReads(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, logger *zap.Logger) *gateway.DirectReads {
	if !cfg.MCPDirectReads {
		return nil
	}
	deps, err := wiring.BuildTools(ctx, wiring.Base{Config: cfg, Logger: logger.Named("tools"), Pool: pool, Telemetry: a.telemetry})
	if err != nil {
		logger.Warn("mcp: read-only calls go to the worker as tool call workflows", zap.Error(err))
		return nil
	}
	return &gateway.DirectReads{Invoker: deps.Invoker, Evidence: deps.Evidence}
}

// parsePrefixes reads CIDRs (a bare address is its own /32 or /128).
func parsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// listToolsPatiently asks the worker for its registry, retrying while no
// worker answers yet (the gateway may start before it).
func listToolsPatiently(ctx context.Context, c *client.Client, wait time.Duration) ([]toolkit.Spec, error) {
	deadline := time.Now().Add(wait)
	for {
		specs, err := c.ListTools(ctx, time.Now().Add(10*time.Second))
		if err == nil {
			return specs, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("list the worker's tools: %w", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (a *app) mcpServeCmd() *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over streamable HTTP at /mcp until interrupted",
		Long: `Serve MCP over streamable HTTP at http://ADDR/mcp (ADDR: --addr, else
CARTWRIGHT_MCP_ADDR, default 127.0.0.1:8090). Every request needs
'Authorization: Bearer <token>' (starter mcp token create). The legacy body
{"tool": …, "arguments": …} posted to /mcp is served too. /healthz answers ok.`,
		Args: cobra.NoArgs,
		RunE: a.withTelemetry(a.withGateway(func(p *gatewayProcess) error {
			if addr == "" {
				addr = p.cfg.MCPAddr
			}
			stopMetrics, err := wiring.ServeMetrics(p.cfg.MCPMetricsAddr, a.telemetry, p.log)
			if err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
			}
			defer stopMetrics()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "listen on %s: %v", addr, err)
			}
			srv := p.gw.HTTPServer()
			fmt.Fprintf(a.stdout, "MCP gateway on http://%s%s (%d tools)\n", ln.Addr(), gateway.Path, len(p.gw.ToolNames()))
			p.log.Info("mcp gateway serving", zap.String("addr", ln.Addr().String()))
			go func() {
				<-a.ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return toolkit.Errorf(toolkit.UpstreamError, "serve: %v", err)
			}
			return nil
		})),
	}
	c.Flags().StringVar(&addr, "addr", "", "listen address (default CARTWRIGHT_MCP_ADDR, 127.0.0.1:8090)")
	return c
}

// withTelemetry builds and installs the process's telemetry (metrics,
// OTLP traces when OTEL_* says so) before fn dials anything, and flushes
// it after: for the long-running commands.
func (a *app) withTelemetry(fn func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		t, err := wiring.Telemetry(a.ctx, "cartwright-gateway")
		if err != nil {
			return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
		}
		a.telemetry = t
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = t.Shutdown(ctx)
		}()
		return fn(cmd, args)
	}
}

// withGateway is a command that runs fn on an open gateway, closed after.
func (a *app) withGateway(fn func(p *gatewayProcess) error) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		p, err := a.openGateway(a.ctx)
		if err != nil {
			return err
		}
		defer p.close()
		return fn(p)
	}
}

func (a *app) mcpStdioCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stdio",
		Short: "Speak MCP on stdin/stdout (for a local agent host) as the agent of CARTWRIGHT_MCP_TOKEN",
		Long: `Speak MCP on stdin and stdout until the host closes stdin. The agent is the one
of the bearer token in CARTWRIGHT_MCP_TOKEN, resolved once at start; without a
valid token every call is answered with -32002 AUTH_FAILED (ACTOR_UNKNOWN
without any token). Logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: a.withGateway(func(p *gatewayProcess) error {
			var actor *gateway.Actor
			why := "CARTWRIGHT_MCP_TOKEN is not set: no agent to act for"
			tok := strings.TrimSpace(p.cfg.MCPToken)
			if tok != "" {
				got, err := p.tokens.Lookup(a.ctx, tok)
				switch {
				case errors.Is(err, gateway.ErrUnknownToken):
					why = "CARTWRIGHT_MCP_TOKEN is unknown or revoked"
				case err != nil:
					return toolkit.Errorf(toolkit.UpstreamError, "look up the token: %v", err)
				default:
					actor = &got
				}
			}
			if err := p.gw.ServeStdio(a.ctx, actor, tok != "", why); err != nil && a.ctx.Err() == nil && !errors.Is(err, io.EOF) {
				return toolkit.Errorf(toolkit.UpstreamError, "stdio: %v", err)
			}
			return nil
		}),
	}
}

func (a *app) mcpTokenCmd() *cobra.Command {
	var (
		actor              gateway.Actor
		tools              []string
		expiresIn          time.Duration
		tokenCreate, token *cobra.Command
	)
	tokenCreate = &cobra.Command{
		Use:   "create --actor ID [--tools a,b] [--tenant T] [--expires-in 720h]",
		Short: "Create a bearer token for an agent and print it (once: only its hash is kept)",
		Long: `Create a bearer token for an agent actor and print it on the first line of
stdout (with --json: {"token", "actor"}). Only its SHA-256 is stored, in the
mcp_tokens table (as the issuing role of CARTWRIGHT_PG_ISSUER_DSN), so it cannot be shown again. --tools
limits what the agent may call (default: every tool); --tenant is the user the
agent acts for (its calls' user_id, and the only merchants it reaches;
default: the agent itself, with every merchant). --expires-in ends the token
that long from now (default: never; revoke it to end it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if actor.ID == "" {
				return usagef("--actor is required")
			}
			actor.Tools = tools
			if expiresIn < 0 {
				return usagef("--expires-in must be positive")
			}
			if expiresIn > 0 {
				at := time.Now().Add(expiresIn).UTC()
				actor.ExpiresAt = &at
			}
			return a.withTokens(func(ctx context.Context, t *gateway.Tokens) error {
				nt, err := t.Create(ctx, actor)
				if err != nil {
					return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
				}
				a.emit(nt, func(w io.Writer) {
					fmt.Fprintln(w, nt.Token)
					fmt.Fprintf(w, "# token %s for agent %s (tools: %s, expires: %s); it is not shown again\n",
						nt.Actor.TokenID, nt.Actor.ID, orAll(nt.Actor.Tools), orNever(nt.Actor.ExpiresAt))
				})
				return nil
			})
		},
	}
	tokenCreate.Flags().StringVar(&actor.ID, "actor", "", "the agent's id (lower-case, e.g. shop-agent)")
	tokenCreate.Flags().StringSliceVar(&tools, "tools", nil, "tools the agent may call, comma-separated (default: every tool)")
	tokenCreate.Flags().StringVar(&actor.Tenant, "tenant", "", "the user the agent acts for (default: the agent itself)")
	tokenCreate.Flags().IntVar(&actor.CallsPerMinute, "calls-per-minute", 0, "call budget (default 120)")
	tokenCreate.Flags().DurationVar(&expiresIn, "expires-in", 0, "end the token this long from now, e.g. 720h (default: never)")
	tokenCreate.Flags().IntVar(&actor.BytesPerMinute, "bytes-per-minute", 0, "payload budget in bytes (default 4 MiB)")
	revoke := &cobra.Command{
		Use:   "revoke TOKEN_ID",
		Short: "Revoke a token (its mt_… id); calls with it fail with AUTH_FAILED from now on",
		Long: `Revoke the token with this id (mt_…, printed by create): every request that
carries it is refused with -32002 AUTH_FAILED from the next request on. The row
stays, so evidence written by the agent can still be traced to it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withTokens(func(ctx context.Context, t *gateway.Tokens) error {
				ok, err := t.Revoke(ctx, args[0])
				if err != nil {
					return toolkit.Errorf(toolkit.UpstreamError, "%v", err)
				}
				if !ok {
					return toolkit.Errorf(toolkit.NotFound, "no live token %s", args[0])
				}
				fmt.Fprintf(a.stdout, "revoked %s\n", args[0])
				return nil
			})
		},
	}
	var all bool
	list := &cobra.Command{
		Use:   "list [--all]",
		Short: "List the tokens: id, actor, tenant, tools, expiry, last use (never the token)",
		Long: `List the live tokens (--all: revoked and expired ones too), newest first: the
token id, the agent, its tenant, its tools, when it expires and when it was
last used (to the minute). The token itself is never stored, so never shown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withTokens(func(ctx context.Context, t *gateway.Tokens) error {
				rows, err := t.List(ctx, all)
				if err != nil {
					return toolkit.Errorf(toolkit.UpstreamError, "%v", err)
				}
				a.emit(rows, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
					fmt.Fprintln(tw, "TOKEN\tACTOR\tTENANT\tTOOLS\tEXPIRES\tLAST USED\tSTATE")
					for _, r := range rows {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.TokenID, r.ActorID, orDash(r.Tenant),
							orAll(r.Tools), orNever(r.ExpiresAt), orDash(timeOrEmpty(r.LastUsed)), r.State)
					}
					_ = tw.Flush()
				})
				return nil
			})
		},
	}
	list.Flags().BoolVar(&all, "all", false, "include revoked and expired tokens")
	token = group("token", "Create, list and revoke agents' bearer tokens",
		`Bearer tokens map to agent actors (starter mcp token create); the MCP gateway
refuses a missing, unknown, revoked or expired token with 401 and -32002
AUTH_FAILED.`, tokenCreate, list, revoke)
	return token
}

func orNever(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

func timeOrEmpty(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orAll(tools []string) string {
	if len(tools) == 0 {
		return "all"
	}
	return strings.Join(tools, ",")
}

// withTokens opens the database as the issuing role (`starter migrate` ran
// first) for the token table: the gateway's runtime role only reads it.
func (a *app) withTokens(fn func(context.Context, *gateway.Tokens) error) error {
	ctx, cancel := a.ctxFor(0)
	defer cancel()
	pool, closePool, err := a.issuerDB(ctx)
	if err != nil {
		return err
	}
	defer closePool()
	return fn(ctx, gateway.NewTokens(pool))
}
