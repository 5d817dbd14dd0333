package activities

import (
	"context"

	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Onboarding runs the five onboarding tools (docs/tools.md#onboarding-tools) as
// activities. worker/wiring registers it with the others; the
// activity type names are the method names. The Stripe client, the merchant
// store and the citation index sit behind the invoker's registry
// (onboarding.RegisterTools), so every call is validated, sanitised and leaves
// evidence.
type Onboarding struct {
	Invoker *toolkit.Invoker
}

// GetMerchantRowInput is the input of GetMerchantRow (merchant.get_row).
type GetMerchantRowInput struct {
	Request toolkit.Request      `json:"request"`
	Args    merchant.GetRowInput `json:"args"`
}

// GetMerchantRowResult holds the merchant row (no PII) and its envelope.
type GetMerchantRowResult struct {
	Row      merchant.GetRowOutput `json:"row"`
	Envelope toolkit.Response      `json:"envelope"`
}

// GetMerchantRow reads the merchant by id or session. found=false is a
// result (status empty), not an error. Errors: UPSTREAM_ERROR (db_error),
// TIMEOUT, both retried.
func (o *Onboarding) GetMerchantRow(ctx context.Context, in GetMerchantRowInput) (GetMerchantRowResult, error) {
	row, env, err := legacy[merchant.GetRowOutput](ctx, o.Invoker, merchant.ToolGetRow, in.Request, in.Args)
	return GetMerchantRowResult{Row: row, Envelope: env}, err
}

// GetAccountStatusInput is the input of GetAccountStatus (stripe.get_account_status).
type GetAccountStatusInput struct {
	Request toolkit.Request                `json:"request"`
	Args    stripetools.AccountStatusInput `json:"args"`
}

// GetAccountStatusResult holds the account status and its envelope.
type GetAccountStatusResult struct {
	Status   stripetools.AccountStatus `json:"status"`
	Envelope toolkit.Response          `json:"envelope"`
}

// GetAccountStatus reads the connected account's capabilities and
// requirements. Errors: NOT_FOUND, UNAUTHORIZED (not retried);
// RATE_LIMITED (retried after Retry-After), TIMEOUT, UPSTREAM_ERROR.
func (o *Onboarding) GetAccountStatus(ctx context.Context, in GetAccountStatusInput) (GetAccountStatusResult, error) {
	st, env, err := legacy[stripetools.AccountStatus](ctx, o.Invoker, stripetools.ToolAccountStatus, in.Request, in.Args)
	return GetAccountStatusResult{Status: st, Envelope: env}, err
}

// CreateRelinkURLInput is the input of CreateRelinkURL
// (stripe.create_relink_url). Request.IdempotencyKey is required.
type CreateRelinkURLInput struct {
	Request toolkit.Request         `json:"request"`
	Args    stripetools.RelinkInput `json:"args"`
}

// CreateRelinkURLResult holds the link as the envelope states it: its hash
// and expiry, the URL masked ("***"). The URL itself is only in the
// envelope's evidence snapshot, encrypted (stripetools.RevealLink).
type CreateRelinkURLResult struct {
	Link     stripetools.Link `json:"link"`
	Envelope toolkit.Response `json:"envelope"`
}

// CreateRelinkURL makes (or, within seconds, reuses) an account_onboarding
// link. Errors: NOT_FOUND (invalid_account), RATE_LIMITED, UPSTREAM_ERROR.
func (o *Onboarding) CreateRelinkURL(ctx context.Context, in CreateRelinkURLInput) (CreateRelinkURLResult, error) {
	l, env, err := legacy[stripetools.Link](ctx, o.Invoker, stripetools.ToolRelinkURL, in.Request, in.Args)
	return CreateRelinkURLResult{Link: l, Envelope: env}, err
}

// CreateLoginLinkInput is the input of CreateLoginLink
// (stripe.create_login_link). Request.IdempotencyKey is required.
type CreateLoginLinkInput struct {
	Request toolkit.Request            `json:"request"`
	Args    stripetools.LoginLinkInput `json:"args"`
}

// CreateLoginLinkResult holds the masked login link and its envelope.
type CreateLoginLinkResult struct {
	Link     stripetools.Link `json:"link"`
	Envelope toolkit.Response `json:"envelope"`
}

// CreateLoginLink makes a new Express Dashboard login link. Errors:
// NOT_FOUND (invalid_account, e.g. not Express), RATE_LIMITED, UPSTREAM_ERROR.
func (o *Onboarding) CreateLoginLink(ctx context.Context, in CreateLoginLinkInput) (CreateLoginLinkResult, error) {
	l, env, err := legacy[stripetools.Link](ctx, o.Invoker, stripetools.ToolLoginLink, in.Request, in.Args)
	return CreateLoginLinkResult{Link: l, Envelope: env}, err
}

// CiteInput is the input of Cite (knowledge.cite).
type CiteInput struct {
	Request toolkit.Request      `json:"request"`
	Args    onboarding.CiteInput `json:"args"`
}

// CiteResult holds the citations and their envelope. Grounded=false comes
// with status empty in the envelope; it is an answer, not an error.
type CiteResult struct {
	Cite     knowledge.CiteResult `json:"cite"`
	Envelope toolkit.Response     `json:"envelope"`
}

// Cite finds citations for a claim. Errors: INVALID_ARGUMENT, UPSTREAM_ERROR
// (search_error), TIMEOUT.
func (o *Onboarding) Cite(ctx context.Context, in CiteInput) (CiteResult, error) {
	c, env, err := legacy[knowledge.CiteResult](ctx, o.Invoker, onboarding.ToolCite, in.Request, in.Args)
	return CiteResult{Cite: c, Envelope: env}, err
}
