package stripetools

import (
	"context"
	"time"

	"github.com/stripe/stripe-go/v76"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolAccountStatus is the registered name of the status tool.
const ToolAccountStatus = "stripe.get_account_status"

// AccountStatusSpec is the ToolSpec of stripe.get_account_status.
func AccountStatusSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolAccountStatus,
		Version: "1.0.0",
		Description: "Read a Stripe connected account's capabilities and verification requirements: whether it can take " +
			"charges and receive payouts, and which requirements are currently due, past due or eventually due. Use it " +
			"before explaining onboarding progress. Succeeds with both flags, the requirement lists and observed_at " +
			"(answers may come from a cache up to 30 s old; pass max_age_seconds=0 right after the merchant returned). " +
			"Fails with NOT_FOUND for an unknown account, RATE_LIMITED (retry after retry_after_seconds), TIMEOUT or " +
			"UPSTREAM_ERROR when Stripe is slow or failing, UNAUTHORIZED when the platform key is wrong.",
		InputSchema:  "stripe.get_account_status.input.json",
		OutputSchema: "stripe.get_account_status.output.json",
		Annotations:  toolkit.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true},
		TTL:          MaxStatusCacheTTL,
		Timeout:      3 * time.Second, // docs/tools.md#onboarding-tools
		Retry:        toolkit.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaxInterval: 2 * time.Second, MaxAttempts: 3},
		Provider:     "stripe",
	}
}

// AccountStatusInput is the tool's input (docs/tools.md#onboarding-tools).
type AccountStatusInput struct {
	StripeAccountID string `json:"stripe_account_id"`
	RequestID       string `json:"request_id,omitempty"`
	// MaxAgeSeconds bounds how old a cached answer may be; nil means the
	// cache's own TTL, 0 forces a fresh read.
	MaxAgeSeconds *int `json:"max_age_seconds,omitempty"`
}

// Requirements are the account's outstanding verification requirements.
type Requirements struct {
	CurrentlyDue        []string `json:"currently_due"`
	PastDue             []string `json:"past_due"`
	EventuallyDue       []string `json:"eventually_due"`
	PendingVerification []string `json:"pending_verification"`
	DisabledReason      string   `json:"disabled_reason,omitempty"`
	CurrentDeadline     string   `json:"current_deadline,omitempty"`
}

// AccountStatus is the tool's data.
type AccountStatus struct {
	StripeAccountID  string       `json:"stripe_account_id"`
	ChargesEnabled   bool         `json:"charges_enabled"`
	PayoutsEnabled   bool         `json:"payouts_enabled"`
	DetailsSubmitted bool         `json:"details_submitted"`
	Requirements     Requirements `json:"requirements"`
	// ObservedAt is when Stripe answered (for a cached answer, the time of
	// the original read, so staleness is visible).
	ObservedAt string `json:"observed_at"`
}

// Due lists the requirements to act on now: past due first, then currently
// due, without duplicates.
func (s AccountStatus) Due() []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{s.Requirements.PastDue, s.Requirements.CurrentlyDue} {
		for _, r := range list {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// Enabled reports whether the account can take charges and receive payouts.
func (s AccountStatus) Enabled() bool { return s.ChargesEnabled && s.PayoutsEnabled }

func (c *Client) accountStatus(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in AccountStatusInput
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := c.checkScope(ctx, call, in.StripeAccountID); err != nil {
		return nil, err
	}
	maxAge := c.cfg.StatusCacheTTL
	if in.MaxAgeSeconds != nil {
		maxAge = time.Duration(*in.MaxAgeSeconds) * time.Second
	}
	if st, _, ok := c.status.get(in.StripeAccountID, maxAge); ok {
		return &toolkit.Output{Data: st, CacheHit: true, Provider: "cache", Warnings: []string{toolkit.WarnUsedCache}}, nil
	}
	start := c.now()
	fetch := func() (AccountStatus, error) {
		acct, err := c.accounts.GetByID(in.StripeAccountID, &stripe.AccountParams{Params: stripe.Params{Context: ctx}})
		if err != nil {
			return AccountStatus{}, err
		}
		at := c.now()
		st := statusOf(in.StripeAccountID, acct, at)
		c.status.put(in.StripeAccountID, st, at)
		return st, nil
	}
	var (
		st     AccountStatus
		shared bool
		err    error
	)
	if maxAge > 0 {
		// A burst shares one request; a forced-fresh read does not join a
		// request that may have started before the change it wants to see.
		st, shared, err = c.statusF.do(ctx, in.StripeAccountID, fetch)
	} else {
		st, err = fetch()
	}
	log := c.log.With(zap.String("tool", ToolAccountStatus), zap.String("account_id", in.StripeAccountID),
		zap.Int64("latency_ms", c.now().Sub(start).Milliseconds()))
	if err != nil {
		te := mapError(ctx, opStatus, err)
		log.Info("stripe account read failed", zap.String("error_code", string(te.Code)), zap.Any("upstream_code", te.Details["upstream_code"]))
		return nil, te
	}
	log.Debug("stripe account read", zap.Bool("shared", shared))
	out := &toolkit.Output{Data: st}
	if shared {
		out.CacheHit, out.Provider, out.Warnings = true, "cache", []string{toolkit.WarnUsedCache}
	}
	return out, nil
}

func statusOf(id string, a *stripe.Account, at time.Time) AccountStatus {
	st := AccountStatus{
		StripeAccountID: id, ChargesEnabled: a.ChargesEnabled, PayoutsEnabled: a.PayoutsEnabled,
		DetailsSubmitted: a.DetailsSubmitted, ObservedAt: at.UTC().Format(time.RFC3339Nano),
		Requirements: Requirements{CurrentlyDue: []string{}, PastDue: []string{}, EventuallyDue: []string{}, PendingVerification: []string{}},
	}
	if r := a.Requirements; r != nil {
		st.Requirements.CurrentlyDue = nonNil(r.CurrentlyDue)
		st.Requirements.PastDue = nonNil(r.PastDue)
		st.Requirements.EventuallyDue = nonNil(r.EventuallyDue)
		st.Requirements.PendingVerification = nonNil(r.PendingVerification)
		st.Requirements.DisabledReason = string(r.DisabledReason)
		if r.CurrentDeadline > 0 {
			st.Requirements.CurrentDeadline = time.Unix(r.CurrentDeadline, 0).UTC().Format(time.RFC3339)
		}
	}
	return st
}

func nonNil(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	return append([]string(nil), s...)
}
