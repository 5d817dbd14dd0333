package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/merchant"
)

// Path is where Stripe posts events (the endpoint to configure, and the
// target of `stripe listen --forward-to`).
const Path = "/webhooks/stripe"

// Defaults of Config.
const (
	// DefaultTolerance is stripe-go's: a signature older than this is refused.
	DefaultTolerance = 5 * time.Minute
	// DefaultMaxBodyBytes: an account object event is typically 5–20 KB;
	// 256 KB leaves room and still bounds what an attacker can make us read.
	DefaultMaxBodyBytes = 256 << 10
)

// Signaler is the part of the Temporal client the receiver uses.
type Signaler interface {
	SignalWithStartWorkflow(ctx context.Context, workflowID string, signalName string, signalArg any,
		options client.StartWorkflowOptions, workflow any, workflowArgs ...any) (client.WorkflowRun, error)
	// SignalWorkflow delivers a payment event to a running draft order's run
	// (payments.go).
	SignalWorkflow(ctx context.Context, workflowID string, runID string, signalName string, arg any) error
}

// Merchants finds the merchant that owns a connected account.
type Merchants interface {
	ByStripeAccount(ctx context.Context, tenant, accountID string) (merchant.Row, bool, error)
}

// Config configures the receiver.
type Config struct {
	// Secrets are the endpoint's signing secrets (whsec_…); during a
	// rotation both the new and the old one are listed, and an event signed
	// with either is accepted.
	Secrets []string
	// Tolerance bounds the age of a signature (default 5 min).
	Tolerance time.Duration
	// MaxBodyBytes bounds the request body (default 256 KB).
	MaxBodyBytes int64
	// TaskQueue is where a started onboarding runs.
	TaskQueue string
	// OnboardingDeadline and ApprovalWindow go into the input of an
	// onboarding the receiver starts (config OnboardingDeadline,
	// ApprovalWindow).
	OnboardingDeadline time.Duration
	ApprovalWindow     time.Duration
	Logger             *zap.Logger
}

// ParseSecrets splits a comma-separated secret list (STRIPE_WEBHOOK_SECRET
// may hold "whsec_new,whsec_old" during a rotation).
func ParseSecrets(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Receiver is the webhook HTTP handler.
type Receiver struct {
	cfg       Config
	pool      *pgxpool.Pool
	temporal  Signaler
	merchants Merchants
	log       *zap.Logger
}

// New builds a receiver. pool holds the dedup table (migration 00021).
func New(cfg Config, pool *pgxpool.Pool, temporal Signaler, merchants Merchants) (*Receiver, error) {
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("webhook: at least one signing secret is required")
	}
	if pool == nil || temporal == nil || merchants == nil || cfg.TaskQueue == "" {
		return nil, errors.New("webhook: pool, Temporal client, merchant store and task queue are required")
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Receiver{cfg: cfg, pool: pool, temporal: temporal, merchants: merchants, log: cfg.Logger.Named("webhook")}, nil
}

// Handler routes POST Path to the receiver and GET /healthz to a liveness
// answer; everything else is 404.
func (rc *Receiver) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(Path, rc)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

// Server is an HTTP server for the receiver with timeouts that keep a slow
// or hostile client from holding connections.
func (rc *Receiver) Server(addr string) *http.Server {
	return &http.Server{
		Addr: addr, Handler: rc.Handler(),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10,
	}
}

// answer is the JSON body of every response: a stable code and a sentence.
type answer struct {
	Status     string `json:"status,omitempty"`
	Error      string `json:"error,omitempty"`
	Message    string `json:"message,omitempty"`
	EventID    string `json:"event_id,omitempty"`
	WorkflowID string `json:"workflow_id,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = jsonEncode(w, v)
}

func refuse(w http.ResponseWriter, status int, code, format string, args ...any) {
	writeJSON(w, status, answer{Error: code, Message: fmt.Sprintf(format, args...)})
}
