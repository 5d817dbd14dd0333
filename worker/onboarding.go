package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/knowledge"
	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/webhook"
)

// registerOnboarding registers the five onboarding tools and the
// Onboarding activities, and starts the Stripe webhook receiver on
// WebhookAddr. It runs after registerDraftOrder, which registers the
// support-staff approval tool and activity the onboarding's review uses.
func registerOnboarding(w worker.Worker, d *Deps) error {
	svc, err := newOnboardingServices(context.Background(), d)
	if err != nil {
		return err
	}
	svc.register(w, d)
	ln, err := net.Listen("tcp", d.Config.WebhookAddr)
	if err != nil {
		return fmt.Errorf("webhook receiver: listen on %s: %w", d.Config.WebhookAddr, err)
	}
	srv := svc.receiver.Server(d.Config.WebhookAddr)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.Logger.Error("webhook receiver stopped", zap.Error(err))
		}
	}()
	// The worker's main loop owns shutdown but offers no hook, so the
	// receiver watches the same signals and drains its requests.
	go func() {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	d.Logger.Info("webhook receiver listening", zap.String("addr", ln.Addr().String()), zap.String("path", webhook.Path))
	return nil
}

// onboardingServices are the clients behind the onboarding tools and the
// webhook receiver, built once per worker.
type onboardingServices struct {
	stripe    *stripetools.Client
	merchants *merchant.Store
	index     *knowledge.Index
	receiver  *webhook.Receiver
}

func newOnboardingServices(ctx context.Context, d *Deps) (*onboardingServices, error) {
	cfg := d.Config
	stripeClient, err := stripetools.NewClient(stripetools.Config{
		SecretKey: cfg.StripeSecretKey, APIBase: cfg.StripeAPIBase,
		ReturnURL: cfg.OnboardingReturnURL, RefreshURL: cfg.OnboardingRefreshURL,
		Logger: d.Logger,
	})
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	index, err := knowledge.Load(lctx, d.Pool)
	if err != nil {
		return nil, fmt.Errorf("load the knowledge corpus: %w", err)
	}
	merchants := merchant.NewStore(d.Pool)
	if err := onboarding.RegisterTools(d.Registry, onboarding.Deps{
		Merchants: merchants, Stripe: stripeClient, Knowledge: index, Logger: d.Logger,
	}); err != nil {
		return nil, err
	}
	receiver, err := webhook.New(webhook.Config{
		Secrets: webhook.ParseSecrets(cfg.StripeWebhookSecret), TaskQueue: cfg.TaskQueue,
		OnboardingDeadline: cfg.OnboardingDeadline, ApprovalWindow: cfg.ApprovalWindow, Logger: d.Logger,
	}, d.Pool, d.Temporal, merchants)
	if err != nil {
		return nil, err
	}
	return &onboardingServices{stripe: stripeClient, merchants: merchants, index: index, receiver: receiver}, nil
}

// register puts the onboarding activities on w.
func (s *onboardingServices) register(w worker.Worker, d *Deps) {
	w.RegisterActivity(&activities.Onboarding{Invoker: d.Invoker})
}
