package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// Config is the whole configuration. Temporal client settings are not here:
// they come from the SDK's own TEMPORAL_* environment configuration.
type Config struct {
	// PostgresDSN is the application database, as a runtime role
	// (docs/evidence.md#database-roles).
	PostgresDSN string `env:"CARTWRIGHT_PG_DSN" envDefault:"postgres://cartwright:cartwright@127.0.0.1:5432/cartwright?sslmode=disable"`
	// PostgresMaxConns sizes the worker's connection pool (0: the DSN's
	// pool_max_conns or pgxpool's default).
	PostgresMaxConns int32 `env:"CARTWRIGHT_PG_MAX_CONNS" envDefault:"24"`
	// TaskQueue is the one queue every workflow and activity runs on.
	TaskQueue string `env:"CARTWRIGHT_TASK_QUEUE" envDefault:"cartwright"`
	// WorkflowPollers and ActivityPollers are the worker's concurrent
	// pollers of workflow and activity tasks (docs/performance.md#pollers):
	// with one task-queue partition, a few pollers per process keep a task
	// from waiting for the next long poll; 0 leaves the SDK default (2).
	WorkflowPollers int `env:"CARTWRIGHT_WORKFLOW_POLLERS" envDefault:"4"`
	ActivityPollers int `env:"CARTWRIGHT_ACTIVITY_POLLERS" envDefault:"4"`
	// WorkflowCacheSize bounds the runs a worker process keeps in memory
	// between their workflow tasks (docs/performance.md#workflow-cache):
	// a draft order's run holds its stock for hours and must not hold memory
	// that long; 0 leaves the SDK default (10,000).
	WorkflowCacheSize int `env:"CARTWRIGHT_WORKFLOW_CACHE_SIZE" envDefault:"64"`
	// WorkerRoles are what this worker process does, comma-separated:
	// workflows, activities, webhook (serve the Stripe webhook receiver),
	// schedules (ensure the reconcile, archive and exchange-rate schedules), codec (serve
	// the codec server on CodecAddr). Any number of
	// workers share the task queue; each may take a subset.
	WorkerRoles string `env:"CARTWRIGHT_WORKER_ROLES" envDefault:"workflows,activities,webhook,schedules,codec"`
	// HealthAddr serves the worker's /livez and /readyz (Kubernetes
	// probes); "" serves none.
	HealthAddr string `env:"CARTWRIGHT_HEALTH_ADDR" envDefault:""`
	// MetricsAddr serves the worker's Prometheus /metrics ("": not at
	// all); MCPMetricsAddr the MCP gateway's (docs/operators.md#observability).
	// Traces go where the standard OTEL_* variables say (none by default).
	MetricsAddr    string `env:"CARTWRIGHT_METRICS_ADDR" envDefault:""`
	MCPMetricsAddr string `env:"CARTWRIGHT_MCP_METRICS_ADDR" envDefault:""`
	// OwnerDSN is the schema owner's connection, read by `starter migrate`
	// only: the worker and the gateway never migrate, and run as a role that
	// owns nothing (docs/evidence.md#database-roles). Keep it out of their
	// environment.
	OwnerDSN string `env:"CARTWRIGHT_PG_OWNER_DSN"`
	// IssuerDSN is the issuing role's connection, read by the operators'
	// `starter staff …` and `starter mcp token …` only: staff, staff tokens
	// and MCP tokens change through it, never through the runtime role
	// (docs/evidence.md#database-roles). Keep it out of the worker's and
	// the gateway's environment (docs/operators.md#keys-and-grants-per-process).
	IssuerDSN string `env:"CARTWRIGHT_PG_ISSUER_DSN"`
	// GRPCCompression is how requests to Temporal are compressed: "none"
	// (default) or "gzip" (the SDK's own default). Every payload we send is
	// encrypted by the payload codec, and ciphertext does not compress, so
	// gzip only costs CPU on both ends (docs/performance.md#garbage-collection-and-compression).
	GRPCCompression string `env:"CARTWRIGHT_GRPC_COMPRESSION" envDefault:"none"`
	// DeploymentName turns on Worker Versioning: the worker joins this
	// Worker Deployment with BuildID, and every workflow it starts is
	// pinned to that build (deploy/SCALING.md#rolling-out-a-build). "" runs unversioned.
	DeploymentName string `env:"CARTWRIGHT_DEPLOYMENT_NAME" envDefault:""`
	// BuildID names this build within the deployment; "" means the build
	// hash linked into the binary (toolkit.BuildHash).
	BuildID string `env:"CARTWRIGHT_BUILD_ID" envDefault:""`
	// LogLevel is a zap level name.
	LogLevel string `env:"CARTWRIGHT_LOG_LEVEL" envDefault:"info"`
	// LogDevelopment switches zap to human-readable console output.
	LogDevelopment bool `env:"CARTWRIGHT_LOG_DEV" envDefault:"false"`

	// EvidenceKey is the base64 AES-256 key that encrypts raw evidence
	// holding PII; EvidenceKeyID names it so keys can rotate.
	EvidenceKey   string `env:"CARTWRIGHT_EVIDENCE_KEY"`
	EvidenceKeyID string `env:"CARTWRIGHT_EVIDENCE_KEY_ID" envDefault:"local-1"`
	// WorkerSigningKeys is the worker's Ed25519 ring that signs every
	// evidence row and draft row it writes, `id:base64seed,…` (32-byte
	// seeds); WorkerSigningKeyID names the current key ("" = the first).
	// GatewaySigningKeys and GatewaySigningKeyID are the MCP gateway's, for
	// its direct calls' rows. Each process holds only its own ring
	// (docs/evidence.md#row-signatures).
	WorkerSigningKeys   string `env:"CARTWRIGHT_WORKER_SIGNING_KEYS"`
	WorkerSigningKeyID  string `env:"CARTWRIGHT_WORKER_SIGNING_KEY_ID"`
	GatewaySigningKeys  string `env:"CARTWRIGHT_GATEWAY_SIGNING_KEYS"`
	GatewaySigningKeyID string `env:"CARTWRIGHT_GATEWAY_SIGNING_KEY_ID"`
	// WorkerRowPublicKeys and GatewayRowPublicKeys are the writers' public
	// keys, `id:base64key,…`, with which verify, the audit, reconcile and
	// the write's checks verify rows: they can check a signature, never
	// make one.
	WorkerRowPublicKeys  string `env:"CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS"`
	GatewayRowPublicKeys string `env:"CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS"`

	// PayloadKeys is the payload codec's key ring, `id:base64key,…`
	// (32-byte AES-256 keys): every payload our clients and workers write
	// to Temporal is encrypted with it. PayloadKeyID names the key that
	// encrypts ("" = the first); the others only decrypt (rotation). Its
	// own key, not the evidence key: every Temporal client holds it.
	PayloadKeys  string `env:"CARTWRIGHT_PAYLOAD_KEYS"`
	PayloadKeyID string `env:"CARTWRIGHT_PAYLOAD_KEY_ID"`
	// QuoteSealKeys is the ring that seals draft-order totals, `id:base64key,…`
	// (32-byte HMAC keys; docs/quote-seals.md#the-seal); QuoteSealKeyID
	// names the key that seals ("" = the first), the others only verify.
	// Required by the worker's workflows and activities roles (which run
	// the tools); no other process holds it, and it is never derived from
	// another key: the gateway holds the evidence key
	// (docs/operators.md#keys-and-grants-per-process).
	QuoteSealKeys  string `env:"CARTWRIGHT_QUOTE_SEAL_KEYS"`
	QuoteSealKeyID string `env:"CARTWRIGHT_QUOTE_SEAL_KEY_ID"`
	// CodecAddr is where the worker serves the codec server the Web UI and
	// `temporal --codec-endpoint` call ("off" = not served).
	CodecAddr string `env:"CARTWRIGHT_CODEC_ADDR" envDefault:"127.0.0.1:8089"`
	// CodecTLSCert and CodecTLSKey serve the codec server over HTTPS (both
	// or neither): the Web UI passes a staff member's access token only to
	// an https:// endpoint (docs/operators.md#sign-in-on-the-cluster).
	CodecTLSCert string `env:"CARTWRIGHT_CODEC_TLS_CERT"`
	CodecTLSKey  string `env:"CARTWRIGHT_CODEC_TLS_KEY"`
	// CodecCORSOrigins are the Web UI origins allowed to call it; a browser
	// request from any other origin is refused (docs/support.md#codec-server-sign-in).
	CodecCORSOrigins []string `env:"CARTWRIGHT_CODEC_CORS_ORIGINS" envSeparator:"," envDefault:"http://localhost:8233,http://127.0.0.1:8233"`
	// SealKeys is the seal key ring, `id:base64key,…` (at least 32 random
	// bytes each): the codec server seals support-staff decisions with the
	// current key (SealKeyID, "" = the first) and the worker and the audit
	// verify them with any key of the ring (docs/approvals.md#sealed-decisions).
	// Only those processes hold it; clients such as the starter do not.
	SealKeys  string `env:"CARTWRIGHT_SEAL_KEYS"`
	SealKeyID string `env:"CARTWRIGHT_SEAL_KEY_ID"`
	// CodecURL is the codec server's endpoint as staff reach it
	// (`starter draft-order approve` seals decisions there); "" means
	// http://CodecAddr/codec.
	CodecURL string `env:"CARTWRIGHT_CODEC_URL"`
	// StaffToken is the staff member's own token (`starter staff token`)
	// with which `starter draft-order approve|reject` obtains the seal.
	StaffToken string `env:"CARTWRIGHT_STAFF_TOKEN"`
	// CodecSecret, when set, is a shared bearer secret the codec server
	// accepts besides staff tokens: for the dev stack only.
	CodecSecret string `env:"CARTWRIGHT_CODEC_SECRET"`

	// ReconcilePendingAfter: audit rows pending longer than this are failed
	// by reconcile (docs/evidence.md#reconcile). Never below a minute.
	ReconcilePendingAfter time.Duration `env:"CARTWRIGHT_RECONCILE_PENDING_AFTER" envDefault:"2h"`
	// ReconcileEvery is the reconcile schedule's interval.
	ReconcileEvery time.Duration `env:"CARTWRIGHT_RECONCILE_EVERY" envDefault:"15m"`

	// FXFeedURL is the ECB euro reference-rate feed (eurofxref-daily.xml
	// format) the worker reads on a schedule into PostgreSQL; prices then
	// use the latest stored day. "" reads no feed: prices use the table
	// shipped with cartwright (2024-12-31), named fallback_table in every
	// quote (docs/operators.md#exchange-rates). Production sets
	// https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml.
	FXFeedURL string `env:"CARTWRIGHT_FX_FEED_URL" envDefault:""`
	// FXMaxAge is how old (from its reference date) the latest stored day
	// may be before prices are refused with UPSTREAM_ERROR. The default
	// covers the ECB's longest gap, Easter (Thursday's rates until
	// Tuesday afternoon).
	FXMaxAge time.Duration `env:"CARTWRIGHT_FX_MAX_AGE" envDefault:"120h"`
	// FXFetchEvery is the interval of the feed's schedule.
	FXFetchEvery time.Duration `env:"CARTWRIGHT_FX_FETCH_EVERY" envDefault:"1h"`

	// ConfirmWindow is how long a draft order waits for the user.
	ConfirmWindow time.Duration `env:"CARTWRIGHT_CONFIRM_WINDOW" envDefault:"30m"`
	// ApprovalWindow is how long a workflow waits for support staff.
	ApprovalWindow time.Duration `env:"CARTWRIGHT_APPROVAL_WINDOW" envDefault:"24h"`
	// HoldWindow is how long a written draft order holds its stock and
	// waits for payment before the stock goes back (docs/stock.md).
	HoldWindow time.Duration `env:"CARTWRIGHT_HOLD_WINDOW" envDefault:"24h"`
	// PlatformFeeBPS is the platform's fee on each charge, in basis points
	// of the total (docs/payments.md#the-charge); the rest goes to the
	// merchant's connected account.
	PlatformFeeBPS int `env:"CARTWRIGHT_PLATFORM_FEE_BPS" envDefault:"300"`
	// RefundApprovalAbove: a refund of more than this (minor units of the
	// order's currency) waits for a staff decision (role refunds or admin,
	// docs/payments.md#refunds).
	RefundApprovalAbove int64 `env:"CARTWRIGHT_REFUND_APPROVAL_ABOVE" envDefault:"10000"`
	// RefundRestock is the operator's choice of whether refunded goods
	// come back to stock (docs/stock.md#returns): on_return (a refund
	// waits for the returned signal, then puts those units back on hand)
	// or never.
	RefundRestock string `env:"CARTWRIGHT_REFUND_RESTOCK" envDefault:"on_return"`
	// ReturnWindow: how long a refund waits for its goods to come back.
	ReturnWindow time.Duration `env:"CARTWRIGHT_RETURN_WINDOW" envDefault:"720h"`
	// PaymentPollEvery: a draft order's run waiting for a payment asks Stripe
	// this often, in case a webhook is late or lost (docs/payments.md).
	PaymentPollEvery time.Duration `env:"CARTWRIGHT_PAYMENT_POLL_EVERY" envDefault:"10m"`
	// ApprovalConfidence: compliance answers below it go to support staff
	// (docs/approvals.md#confidence-threshold).
	ApprovalConfidence float64 `env:"CARTWRIGHT_APPROVAL_CONFIDENCE" envDefault:"0.80"`

	// Stripe: stripe-mock by default; a real test key works by setting
	// STRIPE_SECRET_KEY and STRIPE_API_BASE=https://api.stripe.com.
	StripeSecretKey     string `env:"STRIPE_SECRET_KEY" envDefault:"sk_test_123"`
	StripeAPIBase       string `env:"STRIPE_API_BASE" envDefault:"http://127.0.0.1:12111"`
	StripeWebhookSecret string `env:"STRIPE_WEBHOOK_SECRET" envDefault:"whsec_local_dev_only"`
	WebhookAddr         string `env:"CARTWRIGHT_WEBHOOK_ADDR" envDefault:"127.0.0.1:8088"`
	// OnboardingReturnURL and OnboardingRefreshURL are the account-link
	// landing pages of the platform's front end.
	OnboardingReturnURL  string `env:"CARTWRIGHT_ONBOARDING_RETURN_URL" envDefault:"http://localhost:3000/onboarding/return"`
	OnboardingRefreshURL string `env:"CARTWRIGHT_ONBOARDING_REFRESH_URL" envDefault:"http://localhost:3000/onboarding/refresh"`
	// UIURL is the Temporal Web UI that printed links point to (the stack
	// writes its own into .data/env).
	UIURL string `env:"CARTWRIGHT_UI_URL" envDefault:"http://localhost:8233"`
	// MCPAddr is where `starter mcp serve` listens (streamable HTTP at /mcp).
	MCPAddr string `env:"CARTWRIGHT_MCP_ADDR" envDefault:"127.0.0.1:8090"`
	// MCPToken is the bearer token `starter mcp stdio` acts with (an MCP
	// host passes it in the server's environment).
	MCPToken string `env:"CARTWRIGHT_MCP_TOKEN"`
	// MCPAllowedOrigins are the browser origins allowed to call the MCP
	// gateway (DNS rebinding protection, docs/mcp.md#transport-checks);
	// requests without an Origin header (non-browser clients) pass.
	MCPAllowedOrigins []string `env:"CARTWRIGHT_MCP_ALLOWED_ORIGINS" envSeparator:","`
	// MCPAllowedHosts are the Host header values the gateway answers to
	// (empty: any, but a loopback listener answers only loopback names).
	MCPAllowedHosts []string `env:"CARTWRIGHT_MCP_ALLOWED_HOSTS" envSeparator:","`
	// MCPTrustedProxies are the reverse proxies (CIDRs, e.g. 10.0.0.0/8)
	// whose X-Forwarded-For names the client the gateway throttles
	// failed authentications of (docs/mcp.md#throttling).
	MCPTrustedProxies []string `env:"CARTWRIGHT_MCP_TRUSTED_PROXIES" envSeparator:","`
	// MCPDirectReads makes the gateway answer read-only tool calls itself,
	// without a workflow (docs/mcp.md#direct-reads); false sends every call
	// to the worker as a ToolCall.
	MCPDirectReads bool `env:"CARTWRIGHT_MCP_DIRECT_READS" envDefault:"true"`
	// OnboardingDeadline ends an onboarding that never completes.
	OnboardingDeadline time.Duration `env:"CARTWRIGHT_ONBOARDING_DEADLINE" envDefault:"720h"`

	// OIDC is this program's own client at the organisation's OpenID
	// Connect provider (docs/operators.md#sign-in-on-the-cluster).
	OIDC OIDCClient
	// Provider is that provider as the codec server verifies staff
	// members' access tokens on it.
	Provider OIDCProvider
}

// OIDCProvider is the organisation's OpenID Connect provider, for
// verifying its tokens: Issuer "" verifies none (the codec server then
// knows only cartwright's staff tokens).
type OIDCProvider struct {
	Issuer string `env:"CARTWRIGHT_OIDC_ISSUER"`
	// JWKSURL is where its keys are; "" means Issuer/.well-known/jwks.json.
	JWKSURL string `env:"CARTWRIGHT_OIDC_JWKS_URL"`
	// GroupsClaim names the access-token claim holding a staff member's groups.
	GroupsClaim string `env:"CARTWRIGHT_OIDC_GROUPS_CLAIM" envDefault:"groups"`
	// CAFile is a CA the provider's https certificate may also be signed
	// by (a private one, such as make cluster's); the system's CAs always
	// count. It changes only the calls to the provider.
	CAFile string `env:"CARTWRIGHT_OIDC_CA_FILE"`
}

// JWKS is where the provider's keys are.
func (p OIDCProvider) JWKS() string {
	if p.JWKSURL != "" {
		return p.JWKSURL
	}
	return strings.TrimSuffix(p.Issuer, "/") + "/.well-known/jwks.json"
}

// OIDCClient is a program's client-credentials client: with it, every call
// to Temporal carries the program's access token, fetched from TokenURL and
// refreshed before it expires. All empty: no token (the dev server, and a
// cluster without the authorizer).
type OIDCClient struct {
	TokenURL         string   `env:"CARTWRIGHT_OIDC_TOKEN_URL"`
	ClientID         string   `env:"CARTWRIGHT_OIDC_CLIENT_ID"`
	ClientSecretFile string   `env:"CARTWRIGHT_OIDC_CLIENT_SECRET_FILE"`
	Scopes           []string `env:"CARTWRIGHT_OIDC_SCOPES" envSeparator:","`
	// CAFile: as OIDCProvider's, for the token endpoint.
	CAFile string `env:"CARTWRIGHT_OIDC_CA_FILE"`
}

// Load reads the environment and checks the values that have a floor.
func Load() (Config, error) {
	return parse(env.Options{})
}

// Defaults is the configuration with every default and no environment:
// what a test stack or an embedded process starts from.
func Defaults() (Config, error) {
	return parse(env.Options{Environment: map[string]string{}})
}

func parse(opts env.Options) (Config, error) {
	var c Config
	if err := env.ParseWithOptions(&c, opts); err != nil {
		return c, fmt.Errorf("read configuration: %w", err)
	}
	if c.ReconcilePendingAfter < time.Minute {
		return c, fmt.Errorf("CARTWRIGHT_RECONCILE_PENDING_AFTER=%s: must be at least 60s", c.ReconcilePendingAfter)
	}
	if c.GRPCCompression != "none" && c.GRPCCompression != "gzip" {
		return c, fmt.Errorf("CARTWRIGHT_GRPC_COMPRESSION=%q: must be none or gzip", c.GRPCCompression)
	}
	if c.PlatformFeeBPS < 0 || c.PlatformFeeBPS > 5000 {
		return c, fmt.Errorf("CARTWRIGHT_PLATFORM_FEE_BPS=%d: must be 0 to 5000", c.PlatformFeeBPS)
	}
	if c.PaymentPollEvery < time.Second {
		return c, fmt.Errorf("CARTWRIGHT_PAYMENT_POLL_EVERY=%s: must be at least 1s", c.PaymentPollEvery)
	}
	if c.RefundRestock != "on_return" && c.RefundRestock != "never" {
		return c, fmt.Errorf("CARTWRIGHT_REFUND_RESTOCK=%q: must be on_return or never", c.RefundRestock)
	}
	if c.ReturnWindow < time.Minute {
		return c, fmt.Errorf("CARTWRIGHT_RETURN_WINDOW=%s: must be at least 1m", c.ReturnWindow)
	}
	if c.HoldWindow < time.Second {
		return c, fmt.Errorf("CARTWRIGHT_HOLD_WINDOW=%s: must be at least 1s", c.HoldWindow)
	}
	if c.FXMaxAge < time.Hour {
		return c, fmt.Errorf("CARTWRIGHT_FX_MAX_AGE=%s: must be at least 1h", c.FXMaxAge)
	}
	if c.FXFetchEvery < time.Minute {
		return c, fmt.Errorf("CARTWRIGHT_FX_FETCH_EVERY=%s: must be at least 1m", c.FXFetchEvery)
	}
	if c.FXFeedURL != "" {
		if u, err := url.Parse(c.FXFeedURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return c, fmt.Errorf("CARTWRIGHT_FX_FEED_URL: must be an http(s) URL")
		}
	}
	if (c.CodecTLSCert == "") != (c.CodecTLSKey == "") {
		return c, fmt.Errorf("CARTWRIGHT_CODEC_TLS_CERT and _KEY: set both or neither")
	}
	if o := c.OIDC; (o.TokenURL == "") != (o.ClientID == "") || (o.TokenURL == "") != (o.ClientSecretFile == "") {
		return c, fmt.Errorf("CARTWRIGHT_OIDC_TOKEN_URL, _CLIENT_ID and _CLIENT_SECRET_FILE: set all three or none")
	}
	if c.ApprovalConfidence <= 0 || c.ApprovalConfidence > 1 {
		return c, fmt.Errorf("CARTWRIGHT_APPROVAL_CONFIDENCE=%v: must be in (0,1]", c.ApprovalConfidence)
	}
	return c, nil
}

// CodecEndpoint is where staff reach the codec server: CodecURL, or the
// codec server this configuration serves (http://CodecAddr/codec).
func (c Config) CodecEndpoint() string {
	if c.CodecURL != "" {
		return c.CodecURL
	}
	return "http://" + c.CodecAddr + "/codec"
}
