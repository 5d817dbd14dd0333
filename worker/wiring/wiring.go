// Package wiring builds cartwright's processes: the database pool, the
// Temporal client, the evidence store, the one tool registry and invoker,
// every tool's clients, and the registration of every workflow and activity
// on a worker. The worker's main, the test stacks and any new process (the
// MCP gateway, a codec server) are built here, so there is exactly one list
// of what a worker serves.
package wiring

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/jackc/pgx/v5/pgxpool"
	sdkclient "go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/commerce/fxrates"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/archive"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/servicetoken"
	"github.com/cartwright-dev/cartwright/internal/telemetry"
	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/webhook"
	"github.com/cartwright-dev/cartwright/workflows/registry"
)

// Base is what a process brings: its configuration, logger, database pool
// and Temporal client. Connect makes one from the configuration; tests make
// their own (a database of their own, the test dev server).
type Base struct {
	Config   config.Config
	Logger   *zap.Logger
	Pool     *pgxpool.Pool
	Temporal sdkclient.Client
	// Clock replaces time.Now in the commerce tools (tests of expiry).
	Clock func() time.Time
	// Telemetry is the process's metrics and tracing (nil: none). The
	// Temporal client is instrumented with it where it is dialled
	// (Connect, or the test's own client).
	Telemetry *telemetry.Telemetry
	// writer is whose key signs the rows: the worker's (BuildFor) or the MCP
	// gateway's (BuildTools), docs/evidence.md#row-signatures.
	writer string
}

// Deps is everything built from a Base: the evidence store, the registry
// holding every tool, the one invoker, and the clients behind the tools.
type Deps struct {
	Base
	Evidence  *evidence.Store
	Sealer    *evidence.AESGCM
	Registry  *toolkit.Registry
	Invoker   *toolkit.Invoker
	Stripe    *stripetools.Client
	Merchants *merchant.Store
	Knowledge *knowledge.Index
	Archive   *archive.Store
	// Webhook is the Stripe webhook receiver; the process serves it
	// (Server) where its role says so.
	Webhook *webhook.Receiver
	// Codec is the codec server (Web UI and CLI decode payloads through
	// it); the worker serves it on CARTWRIGHT_CODEC_ADDR.
	Codec *codecserver.Server
	// Seals is the seal key ring: the codec server seals staff decisions
	// with it, support.record_approval verifies them
	// (docs/approvals.md#sealed-decisions).
	Seals *support.SealRing
	// draftTotals re-checks stored draft rows' totals for the reconcile
	// pass (commerce.DraftTotalCheck).
	draftTotals evidence.DraftTotalCheck
	// fx is the feed's rates (fxSource), built once.
	fx *commerce.FeedFX
}

// fxSource is the exchange rates the tools price with and the draft
// order's start check reads (activities.FXRates.RatesInUse): the feed's
// stored days when a feed is configured, else nil (the shipped table,
// docs/operators.md#exchange-rates). One value, so both share its cache.
func (d *Deps) fxSource() commerce.FXSource {
	if d.Config.FXFeedURL == "" {
		return nil
	}
	if d.fx == nil {
		d.fx = &commerce.FeedFX{Store: fxrates.PGStore{Pool: d.Pool}, MaxAge: d.Config.FXMaxAge}
	}
	return d.fx
}

// Connect opens the pool and dials Temporal, as configured. It does not
// migrate: the runtime role it connects as may not change the schema
// (docs/evidence.md#database-roles); `starter migrate` runs first, as the
// owner. The returned close func releases both.
func Connect(ctx context.Context, cfg config.Config, logger *zap.Logger) (Base, func(), error) {
	pool, err := db.Open(ctx, cfg.PostgresDSN, db.MaxConns(cfg.PostgresMaxConns))
	if err != nil {
		return Base{}, nil, err
	}
	tc, err := client.Dial(ctx, cfg, logger)
	if err != nil {
		pool.Close()
		return Base{}, nil, err
	}
	return Base{Config: cfg, Logger: logger, Pool: pool, Temporal: tc},
		func() { tc.Close(); pool.Close() }, nil
}

// BuildFor makes what a worker of roles r serves, and reads only the keys
// those roles hold (docs/operators.md#keys-and-grants-per-process): the
// tools (evidence key, both seal rings, Stripe) for a worker that polls
// (workflows run the tools as local activities, activities as activities),
// the webhook receiver (the webhook secret) for webhook, the codec server
// (the decision seal ring, the dev secret) for codec. A webhook, codec or
// schedules worker never builds a tool, so it needs none of their keys.
func BuildFor(ctx context.Context, b Base, r Roles) (*Deps, error) {
	if b.Pool == nil || b.Temporal == nil {
		return nil, errors.New("wiring: BuildFor needs a database pool and a Temporal client")
	}
	if b.Logger == nil {
		b.Logger = zap.NewNop()
	}
	b.writer = evidence.WriterWorker
	d := &Deps{Base: b}
	type step struct {
		what string
		fn   func(context.Context) error
	}
	var steps []step
	if r.Polls() {
		steps = append(steps, step{"evidence store", d.buildEvidence}, step{"commerce tools", d.buildCommerce},
			step{"support tools", d.buildSupport}, step{"onboarding tools", d.buildOnboarding})
	}
	if r.Webhook {
		steps = append(steps, step{"webhook receiver", d.buildWebhook})
	}
	if r.Codec {
		steps = append(steps, step{"codec server", d.buildCodec})
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			return nil, fmt.Errorf("wiring: %s: %w", s.what, err)
		}
	}
	return d, nil
}

// BuildTools makes what answering read-only tool calls needs and nothing
// else: the evidence store and a registry of the tools that change nothing,
// without a Temporal client (the MCP gateway's direct reads:
// docs/mcp.md#direct-reads). It reads no seal ring, approval or quote: the
// tools that seal or check a seal are not in it, and the gateway holds
// neither ring (docs/operators.md#keys-and-grants-per-process).
func BuildTools(ctx context.Context, b Base) (*Deps, error) {
	if b.Pool == nil {
		return nil, errors.New("wiring: BuildTools needs a database pool")
	}
	if b.Logger == nil {
		b.Logger = zap.NewNop()
	}
	b.writer = evidence.WriterGateway
	d := &Deps{Base: b}
	for _, s := range []struct {
		what string
		fn   func(context.Context) error
	}{
		{"evidence store", d.buildEvidence},
		{"commerce tools", d.buildCommerceReads},
		{"onboarding tools", d.buildOnboarding},
	} {
		if err := s.fn(ctx); err != nil {
			return nil, fmt.Errorf("wiring: %s: %w", s.what, err)
		}
	}
	return d, nil
}

// buildEvidence makes the evidence store, the sealer for PII at rest (draft
// addresses, archived histories), the history archive, and the registry and
// invoker every tool call goes through.
func (d *Deps) buildEvidence(context.Context) error {
	cfg := d.Config
	sealer, err := evidence.NewAESGCMFromBase64(cfg.EvidenceKeyID, cfg.EvidenceKey)
	if err != nil {
		return err
	}
	store, err := evidence.NewStore(d.Pool, sealer, d.Logger)
	if err != nil {
		return err
	}
	signer, err := evidence.RowSignerFromConfig(cfg, d.writer)
	if err != nil {
		return err
	}
	keys, err := evidence.RowKeysFromConfig(cfg)
	if err != nil {
		return err
	}
	store.SignWith(signer)
	store.VerifyWith(keys)
	arch, err := archive.NewStore(d.Pool, sealer)
	if err != nil {
		return err
	}
	d.Evidence, d.Sealer, d.Archive = store, sealer, arch
	d.Registry = toolkit.NewRegistry(schemas.FS)
	var sink toolkit.EvidenceSink = store
	if t := d.Telemetry; t != nil {
		sink = t.Product.Evidence(store)
		store.ObserveAudits(t.Product.Audit)
	}
	d.Invoker = toolkit.NewInvoker(d.Registry, sink, d.Logger)
	// Only this service's own workflow types call tools, and a flow's steps
	// only from that flow (docs/quote-seals.md#who-may-call-a-step).
	d.Invoker.SetCallers(registry.Callers(nil))
	if d.Telemetry != nil {
		d.Invoker.Observe(d.Telemetry.Tools)
	}
	return nil
}

// buildCommerce registers the six commerce tools. Draft orders use the
// evidence store's two-phase audit; shipping addresses are sealed with the
// evidence key, bound to each draft id.
// Totals are sealed with the quote-seal ring and the write checks them
// against the evidence store (docs/quote-seals.md).
func (d *Deps) buildCommerce(context.Context) error {
	cfg := d.Config
	seals, err := commerce.ParseSealRing(cfg.QuoteSealKeys, cfg.QuoteSealKeyID)
	if err != nil {
		return err
	}
	deps := commerce.ToolDeps{
		Pool: d.Pool, Audit: d.Evidence, Sealer: d.Sealer, Clock: d.Clock,
		QuoteSeals: seals, Snapshots: d.Evidence, HoldWindow: cfg.HoldWindow, PlatformFeeBPS: cfg.PlatformFeeBPS,
		RefundApprovalAbove: cfg.RefundApprovalAbove,
	}
	d.draftTotals = commerce.DraftTotalCheck(seals, d.Evidence)
	sc, merchants, err := d.stripeClient()
	if err != nil {
		return err
	}
	deps.Payments, deps.Merchants, deps.Refunds = sc, merchants, sc
	// With a feed configured prices use its stored days, never the shipped
	// table (docs/operators.md#exchange-rates).
	deps.FXSource = d.fxSource()
	return commerce.RegisterTools(d.Registry, deps)
}

// buildCommerceReads registers the commerce tools that change nothing,
// without a quote-seal ring (BuildTools).
func (d *Deps) buildCommerceReads(context.Context) error {
	deps := commerce.ToolDeps{Pool: d.Pool, Audit: d.Evidence, Sealer: d.Sealer, Clock: d.Clock, Snapshots: d.Evidence}
	deps.FXSource = d.fxSource()
	return commerce.RegisterReadTools(d.Registry, deps)
}

// buildSupport reads the seal key ring and registers the support-staff
// approval tool, which verifies every decision's seal with it.
func (d *Deps) buildSupport(context.Context) error {
	seals, err := support.SealRingFromConfig(d.Config)
	if err != nil {
		return err
	}
	d.Seals = seals
	return support.RegisterTools(d.Registry, d.Pool, seals)
}

// stripeClient makes the one Stripe client and merchant store the
// payment tools (commerce) and the onboarding tools share.
func (d *Deps) stripeClient() (*stripetools.Client, *merchant.Store, error) {
	if d.Stripe != nil && d.Merchants != nil {
		return d.Stripe, d.Merchants, nil
	}
	cfg := d.Config
	merchants := merchant.NewStore(d.Pool)
	sc, err := stripetools.NewClient(stripetools.Config{
		SecretKey: cfg.StripeSecretKey, APIBase: cfg.StripeAPIBase,
		ReturnURL: cfg.OnboardingReturnURL, RefreshURL: cfg.OnboardingRefreshURL,
		Logger: d.Logger, AccountScope: merchants.CheckAccount,
	})
	if err != nil {
		return nil, nil, err
	}
	d.Stripe, d.Merchants = sc, merchants
	return sc, merchants, nil
}

// buildOnboarding makes the Stripe client, the merchant store and the
// citation index, and registers the five onboarding tools.
func (d *Deps) buildOnboarding(ctx context.Context) error {
	sc, merchants, err := d.stripeClient()
	if err != nil {
		return err
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	index, err := knowledge.Load(lctx, d.Pool)
	if err != nil {
		return fmt.Errorf("load the knowledge corpus: %w", err)
	}
	d.Stripe, d.Merchants, d.Knowledge = sc, merchants, index
	return onboarding.RegisterTools(d.Registry, onboarding.Deps{
		Merchants: d.Merchants, Stripe: sc, Knowledge: index, Logger: d.Logger,
	})
}

// buildWebhook makes the Stripe webhook receiver, which starts or signals
// onboardings.
func (d *Deps) buildWebhook(context.Context) error {
	cfg := d.Config
	if d.Merchants == nil { // a webhook worker that builds no tools
		d.Merchants = merchant.NewStore(d.Pool)
	}
	r, err := webhook.New(webhook.Config{
		Secrets: webhook.ParseSecrets(cfg.StripeWebhookSecret), TaskQueue: cfg.TaskQueue,
		OnboardingDeadline: cfg.OnboardingDeadline, ApprovalWindow: cfg.ApprovalWindow, Logger: d.Logger,
	}, d.Pool, d.Temporal, d.Merchants)
	if err != nil {
		return err
	}
	d.Webhook = r
	return nil
}

// buildCodec makes the codec server: the payload codec of the configured
// key ring, staff tokens (or the dev stack's shared secret) checked
// against the database, browser sign-ins kept as sessions in the database
// (shared by every replica), decodes logged in evidence_access_log.
func (d *Deps) buildCodec(context.Context) error {
	pc, err := codec.FromConfig(d.Config)
	if err != nil {
		return err
	}
	if d.Seals == nil { // a codec worker that builds no tools: it seals decisions
		if d.Seals, err = support.SealRingFromConfig(d.Config); err != nil {
			return err
		}
	}
	provider, err := d.provider()
	if err != nil {
		return err
	}
	d.Codec = codecserver.New(codecserver.Options{
		Codec:    pc,
		Auth:     codecserver.StaffTokens{Pool: d.Pool, DevSecret: d.Config.CodecSecret},
		Sessions: codecserver.PGSessions{Pool: d.Pool},
		Log:      codecserver.PGAccessLog{Pool: d.Pool},
		Origins:  d.Config.CodecCORSOrigins,
		Logger:   d.Logger.Named("codec"),
		Seals:    d.Seals,
		Provider: provider,
	})
	return nil
}

// provider verifies staff access tokens of the organisation's OpenID
// Connect provider, when one is configured (docs/operators.md#sign-in-on-the-cluster).
// Its keys are fetched with the system's CAs and CARTWRIGHT_OIDC_CA_FILE's.
func (d *Deps) provider() (*codecserver.ProviderTokens, error) {
	p := d.Config.Provider
	if p.Issuer == "" {
		return nil, nil
	}
	hc, err := servicetoken.HTTPClient(p.CAFile)
	if err != nil {
		return nil, err
	}
	return codecserver.NewProviderTokens(oidc.ClientContext(context.Background(), hc), p.Issuer, p.JWKS(), p.GroupsClaim), nil
}
