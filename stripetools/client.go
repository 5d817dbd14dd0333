package stripetools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/account"
	"github.com/stripe/stripe-go/v76/accountlink"
	"github.com/stripe/stripe-go/v76/loginlink"
	"github.com/stripe/stripe-go/v76/paymentintent"
	"github.com/stripe/stripe-go/v76/refund"
	"go.uber.org/zap"
)

// Config configures the Stripe client.
type Config struct {
	// SecretKey is a restricted key (read accounts, write account links and
	// login links) or a test key; never logged.
	SecretKey string
	// APIBase is the API origin: stripe-mock locally, https://api.stripe.com
	// for a real test key.
	APIBase string
	// ReturnURL and RefreshURL are where Stripe's hosted onboarding sends
	// the merchant back; a caller may only name URLs on the same origins.
	ReturnURL, RefreshURL string
	// HTTPClient is optional (tests inject fault servers through APIBase,
	// not through this).
	HTTPClient *http.Client
	Logger     *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StatusCacheTTL is how long an account status is served from memory;
	// at most 30 s (docs/tools.md#onboarding-tools), default 20 s.
	StatusCacheTTL time.Duration
	// RelinkReuseWindow: a relink request for the same account within this
	// window gets the link already made (docs/tools.md#onboarding-tools:
	// deduplicate bursts); default 30 s.
	RelinkReuseWindow time.Duration
	// AccountScope checks that a tenant's call names one of the tenant's
	// own connected accounts (docs/mcp.md#tenants): nil when it does, a
	// FORBIDDEN error otherwise. A call with a tenant is refused when it
	// is not set; a call without one (platform-wide reach) is not checked.
	AccountScope func(ctx context.Context, tenant, accountID string) error
}

// MaxStatusCacheTTL is the upper bound on the status cache
// (docs/tools.md#onboarding-tools).
const MaxStatusCacheTTL = 30 * time.Second

// Client talks to Stripe for the three tools. It holds per-process caches
// and is safe for concurrent use.
type Client struct {
	cfg      Config
	log      *zap.Logger
	now      func() time.Time
	accounts account.Client
	links    accountlink.Client
	logins   loginlink.Client
	intents  paymentintent.Client
	refunds  refund.Client

	status  *ttlCache[AccountStatus]
	statusF group[AccountStatus]
	relinks *ttlCache[createdLink]
	relinkF group[createdLink]
}

// NewClient builds a client on its own stripe-go backend (no global state,
// so tests can point several clients at several servers).
func NewClient(cfg Config) (*Client, error) {
	if cfg.SecretKey == "" {
		return nil, errors.New("stripetools: a secret key is required")
	}
	base, err := url.Parse(cfg.APIBase)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("stripetools: API base must be an http(s) URL")
	}
	for name, u := range map[string]string{"return": cfg.ReturnURL, "refresh": cfg.RefreshURL} {
		if _, err := origin(u); err != nil {
			return nil, fmt.Errorf("stripetools: %s URL: %w", name, err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StatusCacheTTL <= 0 {
		cfg.StatusCacheTTL = 20 * time.Second
	}
	if cfg.StatusCacheTTL > MaxStatusCacheTTL {
		cfg.StatusCacheTTL = MaxStatusCacheTTL
	}
	if cfg.RelinkReuseWindow <= 0 {
		cfg.RelinkReuseWindow = 30 * time.Second
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		// No client-wide timeout: every call carries a context bounded by
		// the tool's time limit, which is the one budget that counts.
		httpClient = &http.Client{}
	}
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:               stripe.String(strings.TrimSuffix(cfg.APIBase, "/")),
		HTTPClient:        httpClient,
		MaxNetworkRetries: stripe.Int64(0), // see the package comment
		LeveledLogger:     leveledLogger{cfg.Logger.Named("stripe-go").Sugar()},
	})
	c := &Client{
		cfg: cfg, log: cfg.Logger, now: cfg.Now,
		accounts: account.Client{B: backend, Key: cfg.SecretKey},
		links:    accountlink.Client{B: backend, Key: cfg.SecretKey},
		logins:   loginlink.Client{B: backend, Key: cfg.SecretKey},
		intents:  paymentintent.Client{B: backend, Key: cfg.SecretKey},
		refunds:  refund.Client{B: backend, Key: cfg.SecretKey},
		status:   newTTLCache[AccountStatus](cfg.StatusCacheTTL, 10000, cfg.Now),
		relinks:  newTTLCache[createdLink](cfg.RelinkReuseWindow, 10000, cfg.Now),
	}
	return c, nil
}

// origin returns scheme://host of an absolute http(s) URL.
func origin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// leveledLogger routes stripe-go's own log lines into zap, and so through
// the redacting core; its per-request chatter goes to debug. Its debug
// level is dropped: stripe-go logs whole response bodies there, and the
// body of an account or login link is the link itself (TestLinksNeverLeak
// caught exactly that; the redacting core would not, the token being in
// the URL's path).
type leveledLogger struct{ s *zap.SugaredLogger }

func (l leveledLogger) Debugf(string, ...any)          {}
func (l leveledLogger) Infof(format string, v ...any)  { l.s.Debugf(format, v...) }
func (l leveledLogger) Warnf(format string, v ...any)  { l.s.Warnf(format, v...) }
func (l leveledLogger) Errorf(format string, v ...any) { l.s.Warnf(format, v...) }
