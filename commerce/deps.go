package commerce

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolDeps is what the commerce tools need. Pool, Audit and Sealer are
// required; every provider left nil gets its built-in implementation.
// The interfaces are kept where a second implementation exists or is
// planned: Catalog and DraftStore (PostgreSQL; in memory for the -short
// matrix), FXSource (the ECB feed as stored; the shipped table), ShippingRater (the
// rate cards; a carrier's rating API) and TaxEstimator (the rule tables;
// a tax engine for US sales tax by address). Address validation and the
// compliance verdict are the product's own rules and have none.
type ToolDeps struct {
	Pool *pgxpool.Pool
	// Audit is the two-phase audit (*evidence.Store).
	Audit AuditLog
	// Sealer encrypts shipping addresses at rest (*evidence.AESGCM).
	Sealer AddressSealer
	// Clock is time.Now unless a test sets it.
	Clock func() time.Time
	// QuoteSeals seal totals and verify them at the write, and Snapshots
	// reads the evidence a seal names (*evidence.Store):
	// docs/quote-seals.md. Both are required unless Unsealed says, for a
	// test's in-memory stack that exercises the arithmetic alone, that
	// totals are neither sealed nor checked.
	QuoteSeals *SealRing
	Snapshots  SnapshotReader
	Unsealed   bool

	Catalog Catalog
	// FXSource gives every call its exchange rates (FeedFX: the stored
	// ECB feed). Nil: the fixed table FX, or the shipped one, named as the
	// fallback in every quote.
	FXSource FXSource
	FX       FXTable
	Shipping ShippingRater
	Tax      TaxEstimator
	Drafts   DraftStore
	// DraftSigner signs the draft rows the built-in store writes (the
	// worker's ring, docs/evidence.md#draft-row-signatures); nil takes the
	// signer of Audit when it has one (*evidence.Store).
	DraftSigner *evidence.RowSigner
	// Stock ends draft orders' holds (PGStock when nil).
	Stock StockStore
	// Payments and Merchants serve the payment tools (payment.go); nil
	// Payments answers them UPSTREAM_ERROR. PlatformFeeBPS is the
	// platform's fee in basis points of the total (config
	// CARTWRIGHT_PLATFORM_FEE_BPS).
	Payments  Payments
	Merchants Merchants
	// Refunds serve checkout.refund_payment (*stripetools.Client).
	Refunds        Refunds
	PlatformFeeBPS int
	// RefundApprovalAbove: the worker's own threshold (config
	// CARTWRIGHT_REFUND_APPROVAL_ABOVE): checkout.refund_payment refunds
	// more than this only with a staff approval of the calling run, whatever
	// threshold the run was started with.
	RefundApprovalAbove int64
	// HoldWindow is how long a draft order holds its stock and stays open
	// (config CARTWRIGHT_HOLD_WINDOW; DraftOrderTTL when zero).
	HoldWindow time.Duration
}

// rowSigner is an audit log that signs its rows (*evidence.Store).
type rowSigner interface {
	Signer() *evidence.RowSigner
}

// tools holds the resolved dependencies the handlers close over.
type tools struct {
	catalog  Catalog
	fx       FXSource
	shipping ShippingRater
	tax      TaxEstimator
	drafts   DraftStore
	stock    StockStore
	hold     time.Duration
	// the payment tools' (payment.go)
	pool      *pgxpool.Pool
	payments  Payments
	merchants Merchants
	refunds   Refunds
	feeBPS    int
	// refundAbove is ToolDeps.RefundApprovalAbove.
	refundAbove int64
	audit       AuditLog
	sealer      AddressSealer
	seals       *SealRing
	snaps       SnapshotReader
	now         func() time.Time
}

func newTools(d ToolDeps) (*tools, error) {
	if d.Audit == nil {
		return nil, errors.New("commerce: an audit log is required (checkout.create_draft_order is a write)")
	}
	if d.Sealer == nil {
		return nil, errors.New("commerce: an address sealer is required: addresses are never stored in clear")
	}
	if !d.Unsealed && (d.QuoteSeals == nil || d.Snapshots == nil) {
		return nil, errors.New("commerce: quote seals and an evidence reader are required: a draft order rests on sealed evidence (docs/quote-seals.md)")
	}
	needPool := d.Catalog == nil || d.Drafts == nil
	if needPool && d.Pool == nil {
		return nil, errors.New("commerce: a pool is required for the built-in catalog and draft store")
	}
	t := &tools{catalog: d.Catalog, fx: d.FXSource, shipping: d.Shipping, tax: d.Tax, drafts: d.Drafts, audit: d.Audit, sealer: d.Sealer, now: d.Clock,
		seals: d.QuoteSeals, snaps: d.Snapshots}
	if t.catalog == nil {
		t.catalog = PGCatalog{Pool: d.Pool}
	}
	if t.drafts == nil {
		signer := d.DraftSigner
		if rs, ok := d.Audit.(rowSigner); ok && signer == nil {
			signer = rs.Signer()
		}
		if signer == nil {
			return nil, errors.New("commerce: the built-in draft store needs a row signer: every draft row names its author (docs/evidence.md#draft-row-signatures)")
		}
		t.drafts = PGDrafts{Pool: d.Pool, Signer: signer}
	}
	t.stock, t.hold = d.Stock, d.HoldWindow
	t.pool, t.payments, t.merchants, t.feeBPS, t.refunds = d.Pool, d.Payments, d.Merchants, d.PlatformFeeBPS, d.Refunds
	t.refundAbove = d.RefundApprovalAbove
	if t.payments != nil && t.merchants == nil {
		return nil, errors.New("commerce: the payment tools need the merchant store")
	}
	if t.stock == nil && d.Pool != nil {
		t.stock = PGStock{Pool: d.Pool}
	}
	if t.hold <= 0 {
		t.hold = DraftOrderTTL
	}
	if t.fx == nil {
		table := d.FX
		if table == nil {
			fx, err := BuiltinFX()
			if err != nil {
				return nil, err
			}
			table = fx
		}
		t.fx = fallbackSource(table)
	}
	if t.shipping == nil {
		t.shipping = RulesShipping{}
	}
	if t.tax == nil {
		t.tax = RulesTax{}
	}
	if t.now == nil {
		t.now = time.Now
	}
	base := t.now
	t.now = func() time.Time { return base().UTC() }
	return t, nil
}

// RegisterTools registers the commerce tools into reg.
func RegisterTools(reg *toolkit.Registry, deps ToolDeps) error {
	return register(reg, deps, func(toolkit.Spec) bool { return true })
}

// RegisterReadTools registers only the commerce tools an agent may call
// that change nothing (the lookups): what the MCP gateway answers itself
// (docs/mcp.md#direct-reads). No tool it registers seals a total or checks
// a seal, so it needs no quote-seal ring, and the process that calls it
// holds none (docs/operators.md#keys-and-grants-per-process).
func RegisterReadTools(reg *toolkit.Registry, deps ToolDeps) error {
	deps.QuoteSeals, deps.Unsealed = nil, true
	return register(reg, deps, func(s toolkit.Spec) bool { return s.Annotations.ReadOnly && !s.Internal })
}

// register registers the commerce tools keep admits.
func register(reg *toolkit.Registry, deps ToolDeps, keep func(toolkit.Spec) bool) error {
	t, err := newTools(deps)
	if err != nil {
		return err
	}
	for _, r := range []struct {
		spec toolkit.Spec
		h    toolkit.Handler
	}{
		{quoteSpec(), t.getQuote},
		{shippingSpec(), t.quoteShipping},
		{dutiesSpec(), t.estimateDuties},
		{complianceSpec(), t.checkCompliance},
		{totalSpec(), t.computeTotal},
		{chooseOriginsSpec(), t.chooseOrigins},
		{draftSpec(), t.createDraftOrder},
		{settleStockSpec(), t.settleStock},
		{createPaymentSpec(), t.createPayment},
		{getPaymentSpec(), t.getPayment},
		{cancelPaymentSpec(), t.cancelPayment},
		{refundSpec(), t.refundPayment},
		{restockSpec(), t.restockReturned},
	} {
		if !keep(r.spec) {
			continue
		}
		if err := reg.Register(r.spec, r.h); err != nil {
			return err
		}
	}
	return nil
}

// lookupSpec is the spec of a read-only lookup tool (pricing, shipping,
// duties, compliance): schemas named after the tool, idempotent, 5 s per
// call, retried up to 5 times from 200 ms to 5 s, evidence required.
func lookupSpec(name string, ttl time.Duration, provider, description string) toolkit.Spec {
	return toolkit.Spec{
		Name:             name,
		Version:          "1.0.0",
		Description:      description,
		InputSchema:      name + ".input.json",
		OutputSchema:     name + ".output.json",
		Annotations:      toolkit.Annotations{ReadOnly: true, Idempotent: true},
		TTL:              ttl,
		Timeout:          5 * time.Second,
		Retry:            toolkit.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaxInterval: 5 * time.Second, MaxAttempts: 5},
		EvidenceRequired: true,
		Provider:         provider,
	}
}

// Specs are the commerce tools' specs, exactly as RegisterTools
// registers them: what workflows derive their activity options from.
func Specs() []toolkit.Spec {
	return []toolkit.Spec{quoteSpec(), shippingSpec(), dutiesSpec(), complianceSpec(), totalSpec(), draftSpec(), chooseOriginsSpec(), settleStockSpec(),
		createPaymentSpec(), getPaymentSpec(), cancelPaymentSpec(), refundSpec(), restockSpec()}
}
