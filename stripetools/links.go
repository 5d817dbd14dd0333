package stripetools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/stripe/stripe-go/v76"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// How a link stays secret.
//
// A link is a bearer credential: whoever holds it continues the merchant's
// onboarding or opens their Express Dashboard. The sanitiser does not
// recognise it as one (the token sits in the path, not in a query
// parameter), so the tool itself puts the URL under the output key
// "secret", which the sanitiser always masks. The consequences:
//   - the envelope, the activity result and so the workflow history, the
//     logs and the evidence snapshot's clear output hold "***", the URL's
//     SHA-256 and expires_at only;
//   - because sanitising changed the output, the invoker hands the raw
//     output to the evidence store, which keeps it only encrypted; the
//     front end gets the URL with RevealLink, an access-logged read of that
//     snapshot (evidence.Store.ReadRaw), and checks it against url_sha256.
//
// Tests assert every one of these (links_test.go).
const secretField = "secret"

// ToolRelinkURL and ToolLoginLink are the registered names of the link tools.
const (
	ToolRelinkURL = "stripe.create_relink_url"
	ToolLoginLink = "stripe.create_login_link"
)

// LoginLinkLifetime is how long we treat an Express login link as usable.
// Stripe returns no expiry for login links; they are single-use and short
// lived, so the estimate is deliberately short.
const LoginLinkLifetime = 5 * time.Minute

// minRemaining: a link closer than this to expiry is not handed out again.
const minRemaining = 60 * time.Second

// RelinkURLSpec is the ToolSpec of stripe.create_relink_url.
func RelinkURLSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolRelinkURL,
		Version: "1.0.0",
		Description: "Create a Stripe-hosted onboarding link (Account Link, type account_onboarding) so the merchant can " +
			"provide what Stripe still requires. Use it when stripe.get_account_status lists requirements due. Succeeds " +
			"with the link's SHA-256 and expires_at; the link itself is masked and only revealed to the merchant's session. " +
			"A burst of requests for the same account reuses the link made seconds ago. Fails with NOT_FOUND " +
			"(invalid_account), RATE_LIMITED or UPSTREAM_ERROR; then send the merchant to the Express Dashboard " +
			"(stripe.create_login_link). Needs an idempotency_key.",
		InputSchema:  "stripe.create_relink_url.input.json",
		OutputSchema: "stripe.create_relink_url.output.json",
		// Not read-only (it creates an object at Stripe) but idempotent per
		// key. Not a sensitive sink: the link goes back to the merchant's own
		// session only, so it does not route to support staff
		// (docs/approvals.md#when-a-human-decides).
		Annotations:      toolkit.Annotations{Idempotent: true, OpenWorld: true},
		TTL:              0, // single use: never serve it from a cache of answers
		Timeout:          4 * time.Second,
		Retry:            toolkit.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaxInterval: 2 * time.Second, MaxAttempts: 3},
		EvidenceRequired: true, // the encrypted raw output is the only copy of the link
		Provider:         "stripe",
	}
}

// LoginLinkSpec is the ToolSpec of stripe.create_login_link.
func LoginLinkSpec() toolkit.Spec {
	return toolkit.Spec{
		Name:    ToolLoginLink,
		Version: "1.0.0",
		Description: "Create a single-use Stripe Express Dashboard login link so the merchant can manage payouts and " +
			"profile details on Stripe's own site (redirect there; never embed or proxy the dashboard). Every call makes a " +
			"new link. Succeeds with the link's SHA-256 and an estimated expires_at; the link itself is masked and only " +
			"revealed to the merchant's session. Fails with NOT_FOUND (invalid_account, e.g. not an Express account), " +
			"RATE_LIMITED or UPSTREAM_ERROR; then retry later or continue onboarding with stripe.create_relink_url. " +
			"Needs an idempotency_key.",
		InputSchema:      "stripe.create_login_link.input.json",
		OutputSchema:     "stripe.create_login_link.output.json",
		Annotations:      toolkit.Annotations{Idempotent: true, OpenWorld: true},
		TTL:              0,
		Timeout:          4 * time.Second,
		Retry:            toolkit.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaxInterval: 2 * time.Second, MaxAttempts: 3},
		EvidenceRequired: true,
		Provider:         "stripe",
	}
}

// RelinkInput is the input of stripe.create_relink_url
// (docs/tools.md#onboarding-tools).
type RelinkInput struct {
	StripeAccountID string `json:"stripe_account_id"`
	// ReturnURL and RefreshURL default to the configured pages and must
	// share their origins: an agent must not be able to send the merchant
	// back to a site of its choosing.
	ReturnURL  string `json:"return_url,omitempty"`
	RefreshURL string `json:"refresh_url,omitempty"`
	// Collect is currently_due (default) or eventually_due.
	Collect string `json:"collect,omitempty"`
	// ForceNew skips the burst reuse: the caller knows the last link was
	// used (the merchant came back) or abandoned, and a link is single-use.
	ForceNew bool `json:"force_new,omitempty"`
	// Locale is accepted for compatibility with older callers; Stripe's hosted
	// page follows the browser's language, so it is not sent.
	Locale    string `json:"locale,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// LoginLinkInput is the input of stripe.create_login_link
// (docs/tools.md#onboarding-tools).
type LoginLinkInput struct {
	StripeAccountID string `json:"stripe_account_id"`
	// ReturnTo is accepted for compatibility with older callers; the login link
	// API has no post-login redirect, so it is reported as unsupported.
	ReturnTo  string `json:"return_to,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// Link is the data of both link tools. Secret is the URL before
// sanitising and "***" after; everything else is safe to show and store.
type Link struct {
	StripeAccountID    string `json:"stripe_account_id"`
	AccountLinkType    string `json:"account_link_type,omitempty"`
	DryRun             bool   `json:"dry_run"`
	Reused             bool   `json:"reused"`
	CreatedAt          string `json:"created_at,omitempty"`
	ExpiresAt          string `json:"expires_at,omitempty"`
	ExpiresAtEstimated bool   `json:"expires_at_estimated,omitempty"`
	URLSHA256          string `json:"url_sha256,omitempty"`
	Secret             string `json:"secret,omitempty"`
}

// WarnReturnToUnsupported: the caller asked for a post-login redirect the
// login link API cannot do.
const WarnReturnToUnsupported = "return_to_unsupported"

// StripeIdempotencyKey is the Idempotency-Key header of a Stripe POST: a
// hash over the idempotency scope (docs/envelope.md#idempotency: user_id, tool
// name, the envelope's idempotency key). The workflow derives that key from its
// workflow id and step, never from a run id, so every attempt of one step,
// before or after continue-as-new, reaches the same Stripe object.
func StripeIdempotencyKey(tool string, req toolkit.Request) string {
	sum := sha256.Sum256([]byte(req.UserID + "\x00" + tool + "\x00" + req.IdempotencyKey))
	return "cw-" + hex.EncodeToString(sum[:20])
}

// URLHash is the hash of a link kept in clear evidence and history.
func URLHash(u string) string { return toolkit.HashBytes([]byte(u)) }

type createdLink struct {
	url       string
	createdAt time.Time
	expiresAt time.Time
	// estimated: expiresAt is ours, not Stripe's (accountLinkTimes).
	estimated bool
}

// AccountLinkLifetime is how long an account link is treated as usable when
// Stripe's answer carries no believable expiry: Stripe's account links
// expire after a few minutes, as login links do.
const AccountLinkLifetime = LoginLinkLifetime

// accountLinkTimes takes an account link's times from Stripe's answer
// unless they cannot be true of a link made now: a creation more than a
// day from now, or an expiry not after the creation (stripe-mock answers
// every link with the fixed 2009-02-13 of its fixtures). Then the link
// is dated now and its expiry estimated (expires_at_estimated), never
// shown as expired years ago.
func accountLinkTimes(url string, created, expires int64, now time.Time) createdLink {
	l := createdLink{url: url, createdAt: unixOr(created, now), expiresAt: time.Unix(expires, 0)}
	if d := l.createdAt.Sub(now); d > 24*time.Hour || d < -24*time.Hour {
		l.createdAt = now
	}
	if !l.expiresAt.After(l.createdAt) {
		l.expiresAt, l.estimated = l.createdAt.Add(AccountLinkLifetime), true
	}
	return l
}

func (c *Client) relink(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in RelinkInput
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := c.checkScope(ctx, call, in.StripeAccountID); err != nil {
		return nil, err
	}
	returnURL, refreshURL, err := c.landingURLs(in)
	if err != nil {
		return nil, err
	}
	collect := in.Collect
	if collect == "" {
		collect = "currently_due"
	}
	if call.Request.DryRun {
		return &toolkit.Output{Data: Link{StripeAccountID: in.StripeAccountID, AccountLinkType: "account_onboarding", DryRun: true}}, nil
	}
	key := in.StripeAccountID + "|" + returnURL + "|" + refreshURL + "|" + collect
	now := c.now()
	if l, _, ok := c.relinks.get(key, c.cfg.RelinkReuseWindow); ok && !in.ForceNew && l.expiresAt.Sub(now) >= minRemaining {
		c.logLink(ToolRelinkURL, in.StripeAccountID, l, now, true)
		return &toolkit.Output{Data: c.linkData(in.StripeAccountID, "account_onboarding", l, true, false), CacheHit: true, Provider: "cache"}, nil
	}
	idemKey := StripeIdempotencyKey(ToolRelinkURL, call.Request)
	l, shared, err := c.relinkF.do(ctx, key, func() (createdLink, error) {
		params := &stripe.AccountLinkParams{
			Params:     stripe.Params{Context: ctx, IdempotencyKey: stripe.String(idemKey)},
			Account:    stripe.String(in.StripeAccountID),
			Type:       stripe.String("account_onboarding"),
			ReturnURL:  stripe.String(returnURL),
			RefreshURL: stripe.String(refreshURL),
			Collect:    stripe.String(collect),
		}
		al, err := c.links.New(params)
		if err != nil {
			return createdLink{}, err
		}
		l := accountLinkTimes(al.URL, al.Created, al.ExpiresAt, c.now())
		c.relinks.put(key, l, c.now())
		return l, nil
	})
	if err != nil {
		return nil, c.linkFailed(ctx, ToolRelinkURL, in.StripeAccountID, now, err)
	}
	c.logLink(ToolRelinkURL, in.StripeAccountID, l, now, shared)
	out := &toolkit.Output{Data: c.linkData(in.StripeAccountID, "account_onboarding", l, shared, l.estimated)}
	if shared {
		out.CacheHit, out.Provider = true, "cache"
	}
	return out, nil
}

func (c *Client) loginLink(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in LoginLinkInput
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	if err := c.checkScope(ctx, call, in.StripeAccountID); err != nil {
		return nil, err
	}
	var warnings []string
	if in.ReturnTo != "" {
		warnings = append(warnings, WarnReturnToUnsupported)
	}
	if call.Request.DryRun {
		return &toolkit.Output{Data: Link{StripeAccountID: in.StripeAccountID, DryRun: true}, Warnings: warnings}, nil
	}
	// A repeated click makes a new link (docs/tools.md#onboarding-tools), so
	// there is no reuse here; only a retry of the same step (same idempotency
	// key) gets Stripe's stored answer.
	now := c.now()
	ll, err := c.logins.New(&stripe.LoginLinkParams{
		Params:  stripe.Params{Context: ctx, IdempotencyKey: stripe.String(StripeIdempotencyKey(ToolLoginLink, call.Request))},
		Account: stripe.String(in.StripeAccountID),
	})
	if err != nil {
		return nil, c.linkFailed(ctx, ToolLoginLink, in.StripeAccountID, now, err)
	}
	created := unixOr(ll.Created, now)
	l := createdLink{url: ll.URL, createdAt: created, expiresAt: created.Add(LoginLinkLifetime)}
	c.logLink(ToolLoginLink, in.StripeAccountID, l, now, false)
	return &toolkit.Output{Data: c.linkData(in.StripeAccountID, "", l, false, true), Warnings: warnings}, nil
}

func (c *Client) linkData(account, linkType string, l createdLink, reused, estimated bool) Link {
	return Link{
		StripeAccountID: account, AccountLinkType: linkType, Reused: reused,
		CreatedAt: l.createdAt.UTC().Format(time.RFC3339), ExpiresAt: l.expiresAt.UTC().Format(time.RFC3339),
		ExpiresAtEstimated: estimated, URLSHA256: URLHash(l.url), Secret: l.url,
	}
}

// landingURLs applies the configured defaults and refuses foreign origins.
func (c *Client) landingURLs(in RelinkInput) (string, string, error) {
	check := func(field, given, configured string) (string, error) {
		if given == "" {
			return configured, nil
		}
		want, _ := origin(configured)
		got, err := origin(given)
		if err != nil || got != want {
			return "", toolkit.Errorf(toolkit.InvalidArgument, "%s must be on %s", field, want).
				WithDetail("fields", []string{field}).WithRecovery("omit " + field + " to use the platform's page")
		}
		return given, nil
	}
	ret, err := check("return_url", in.ReturnURL, c.cfg.ReturnURL)
	if err != nil {
		return "", "", err
	}
	ref, err := check("refresh_url", in.RefreshURL, c.cfg.RefreshURL)
	return ret, ref, err
}

// logLink records the account, expiry and latency
// (docs/tools.md#onboarding-tools) and never the URL: only a short prefix of
// its hash, to correlate with evidence.
func (c *Client) logLink(tool, account string, l createdLink, start time.Time, reused bool) {
	c.log.Info("stripe link ready", zap.String("tool", tool), zap.String("account_id", account),
		zap.Time("expires_at", l.expiresAt), zap.Bool("reused", reused),
		zap.String("url_hash", URLHash(l.url)[:19]), zap.Int64("latency_ms", c.now().Sub(start).Milliseconds()))
}

func (c *Client) linkFailed(ctx context.Context, tool, account string, start time.Time, err error) *toolkit.Error {
	te := mapError(ctx, opLink, err)
	c.log.Info("stripe link failed", zap.String("tool", tool), zap.String("account_id", account),
		zap.String("error_code", string(te.Code)), zap.Any("upstream_code", te.Details["upstream_code"]),
		zap.Int64("latency_ms", c.now().Sub(start).Milliseconds()))
	return te
}

func unixOr(sec int64, fallback time.Time) time.Time {
	if sec <= 0 {
		return fallback
	}
	return time.Unix(sec, 0)
}
