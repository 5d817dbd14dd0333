package merchant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolGetRow is the tool's registered name.
const ToolGetRow = "merchant.get_row"

// GetRowSpec is the ToolSpec of merchant.get_row. The workflow builds its
// activity options from it, so timeout and retries live in one place.
func GetRowSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolGetRow,
		Version: "1.0.0",
		Description: "Read the platform's merchant record by merchant_id or user_session_id to learn whether the merchant " +
			"has a Stripe connected account and where onboarding stands. Succeeds with found=true and the account id; " +
			"found=false (status empty) when nothing matches or the session expired: then give documentation-only advice " +
			"or ask the user to start onboarding. Fails with UPSTREAM_ERROR (db_error) or TIMEOUT when the database is " +
			"slow or down. Never returns PII (names, e-mail, phone).",
		InputSchema:  "merchant.get_row.input.json",
		OutputSchema: "merchant.get_row.output.json",
		Annotations:  toolkit.Annotations{ReadOnly: true, Idempotent: true},
		TTL:          60 * time.Second,
		// 1.5 s (docs/tools.md#onboarding-tools). The statement timeout (1 s)
		// fires first, so a slow query is reported as TIMEOUT from the
		// database, not a cut call.
		Timeout:  1500 * time.Millisecond,
		Retry:    toolkit.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaxInterval: 2 * time.Second, MaxAttempts: 3},
		Provider: "postgres",
	}
}

// GetRowInput is the tool's input (docs/tools.md#onboarding-tools).
type GetRowInput struct {
	MerchantID    string `json:"merchant_id,omitempty"`
	UserSessionID string `json:"user_session_id,omitempty"`
	RequestID     string `json:"request_id,omitempty"`
}

// StatusSummary is the non-PII part of the row an agent may show.
type StatusSummary struct {
	OnboardingStatus string `json:"onboarding_status"`
	Country          string `json:"country"`
	BusinessType     string `json:"business_type"`
	HasStripeAccount bool   `json:"has_stripe_account"`
	UpdatedAt        string `json:"updated_at,omitempty"`
}

// GetRowOutput is the tool's data.
type GetRowOutput struct {
	Found           bool           `json:"found"`
	Lookup          string         `json:"lookup"`
	MerchantID      string         `json:"merchant_id,omitempty"`
	StripeAccountID string         `json:"stripe_account_id,omitempty"`
	StatusSummary   *StatusSummary `json:"status_summary,omitempty"`
	Version         int64          `json:"version,omitempty"`
	ObservedAt      string         `json:"observed_at"`
}

// Deps are what the tool needs.
type Deps struct {
	Store  *Store
	Logger *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// RegisterTools adds merchant.get_row to reg.
func RegisterTools(reg *toolkit.Registry, d Deps) error {
	if d.Store == nil {
		return errors.New("merchant: RegisterTools needs a Store")
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return reg.Register(GetRowSpec(), d.getRow)
}

func (d Deps) getRow(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in GetRowInput
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	start := d.Now()
	var (
		row    Row
		found  bool
		err    error
		lookup string
	)
	// Logs carry hashes of the identifiers, never values
	// (docs/privacy.md#logs): a session id is a bearer credential.
	log := d.Logger.With(zap.String("tool", ToolGetRow))
	// A tenant's call reaches only the tenant's merchants
	// (docs/mcp.md#tenants); a call without one has platform-wide reach.
	scope := call.Request.Tenant
	if scope == "" {
		scope = AllTenants
	}
	if in.MerchantID != "" {
		lookup = "merchant_id"
		log = log.With(zap.String("merchant_id_hash", shortHash(in.MerchantID)))
		row, found, err = d.Store.ByID(ctx, scope, in.MerchantID)
		if err == nil && !found && scope != AllTenants {
			// Whether it exists elsewhere is not the tenant's to learn.
			err = ErrOtherTenant
		}
	} else {
		lookup = "user_session_id"
		log = log.With(zap.String("session_hash", shortHash(in.UserSessionID)))
		row, found, err = d.Store.BySession(ctx, scope, in.UserSessionID)
	}
	rows := 0
	if found {
		rows = 1
	}
	log.Debug("merchant lookup", zap.String("lookup", lookup), zap.Int64("sql_ms", d.Now().Sub(start).Milliseconds()), zap.Int("rows", rows))
	if errors.Is(err, ErrOtherTenant) {
		log.Info("merchant outside the caller's tenant refused", zap.String("lookup", lookup))
		return nil, forbidden(call.Request.Tenant, lookup)
	}
	if err != nil {
		return nil, dbError(ctx, err)
	}
	out := GetRowOutput{Found: found, Lookup: lookup, ObservedAt: d.Now().UTC().Format(time.RFC3339Nano)}
	if !found {
		return &toolkit.Output{Data: out, Status: toolkit.StatusEmpty}, nil
	}
	out.MerchantID, out.StripeAccountID, out.Version = row.MerchantID, row.StripeAccountID, row.Version
	out.StatusSummary = &StatusSummary{
		OnboardingStatus: row.OnboardingStatus, Country: row.Country, BusinessType: row.BusinessType,
		HasStripeAccount: row.StripeAccountID != "", UpdatedAt: row.UpdatedAt.UTC().Format(time.RFC3339Nano),
	}
	return &toolkit.Output{Data: out}, nil
}

// forbidden is the refusal of a merchant outside the caller's tenant: the
// same for one that exists elsewhere and one that does not.
func forbidden(tenant, what string) *toolkit.Error {
	return toolkit.Errorf(toolkit.Forbidden, "the %s names no merchant of tenant %s", what, tenant).
		WithDetail("tenant", tenant).
		WithRecovery("use a merchant of your own tenant; ask the platform team if the merchant should be yours")
}

// CheckAccount is stripetools.Config.AccountScope: nil when the connected
// account belongs to one of tenant's merchants, FORBIDDEN when not (or
// when there is no such account), the database's failure otherwise.
func (s *Store) CheckAccount(ctx context.Context, tenant, accountID string) error {
	_, found, err := s.ByStripeAccount(ctx, tenant, accountID)
	if err != nil {
		return dbError(ctx, err)
	}
	if !found {
		return forbidden(tenant, "stripe_account_id")
	}
	return nil
}

// dbError maps a database failure onto the upstream names of
// docs/errors.md#upstream-codes (timeout, unauthorized, db_error) and from
// there into the closed code set.
func dbError(ctx context.Context, err error) *toolkit.Error {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
		return toolkit.FromUpstream("timeout", "the merchant database did not answer in time").WithCause(err).
			WithRecovery("retry shortly; meanwhile give documentation-only advice", "knowledge.cite")
	case errors.As(err, &pgErr) && pgErr.Code == "57014": // query_canceled: our statement_timeout
		return toolkit.FromUpstream("timeout", "the merchant query exceeded its statement timeout").WithCause(err).
			WithRecovery("retry shortly; meanwhile give documentation-only advice", "knowledge.cite")
	case errors.As(err, &pgErr) && (pgErr.Code == "42501" || pgErr.Code == "28000" || pgErr.Code == "28P01"):
		return toolkit.FromUpstream("unauthorized", "the service account may not read merchants").WithCause(err).
			WithRecovery("report to the platform team; give documentation-only advice", "knowledge.cite")
	default:
		return toolkit.FromUpstream("db_error", "the merchant database failed").WithCause(err).
			WithRecovery("retry shortly, or ask the user to start onboarding from the beginning", "knowledge.cite")
	}
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
