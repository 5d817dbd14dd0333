// Command worker serves every cartwright workflow and activity on one task
// queue. It migrates the database, builds every tool into one registry
// (package wiring), ensures the reconcile and archive schedules, serves the
// Stripe webhook receiver and the codec server (CARTWRIGHT_CODEC_ADDR), and
// runs until interrupted.
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

	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/health"
	"github.com/cartwright-dev/cartwright/internal/logging"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/webhook"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	logger, err := logging.NewLogger(cfg.LogLevel, cfg.LogDevelopment)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	logger = logger.With(zap.String("task_queue", cfg.TaskQueue), zap.String("build", toolkit.BuildHash()))
	gogc := tuneGC()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Telemetry first: the Temporal client dialled next reports through it.
	tel, err := wiring.Telemetry(ctx, "cartwright-worker")
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tel.Shutdown(sctx)
	}()
	base, closeBase, err := wiring.Connect(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeBase()
	base.Telemetry = tel
	roles, err := wiring.ParseRoles(cfg.WorkerRoles)
	if err != nil {
		return err
	}
	// Only what its roles serve, with only their keys
	// (docs/operators.md#keys-and-grants-per-process).
	deps, err := wiring.BuildFor(ctx, base, roles)
	if err != nil {
		return err
	}
	if roles.Schedules {
		if err := deps.EnsureSchedules(ctx); err != nil {
			return err
		}
		// One process per deployment counts what waits (not summed over
		// replicas): the one that owns the schedules.
		if err := deps.ObserveWaiting(15 * time.Second); err != nil {
			return err
		}
	}
	stopMetrics, err := wiring.ServeMetrics(cfg.MetricsAddr, tel, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()
	probe := &health.Probe{Ping: deps.Pool.Ping}
	if cfg.HealthAddr != "" {
		stopHealth, err := serveHealth(cfg.HealthAddr, probe, logger)
		if err != nil {
			return err
		}
		defer stopHealth()
	}
	if roles.Webhook {
		stopWebhook, err := serveWebhook(deps)
		if err != nil {
			return err
		}
		defer stopWebhook()
	}
	if roles.Codec {
		stopCodec, err := serveCodec(deps)
		if err != nil {
			return err
		}
		defer stopCodec()
	}
	if !roles.Polls() {
		logger.Info("worker serving without polling", zap.String("roles", cfg.WorkerRoles))
		probe.Started()
		<-ctx.Done()
		return nil
	}
	// A fatal worker error (namespace gone, credentials revoked) ends the
	// process: the probe fails /livez meanwhile, and the exit lets the
	// orchestrator restart it.
	versioning, err := wiring.DeploymentOptions(cfg)
	if err != nil {
		return err
	}
	if cfg.WorkflowCacheSize > 0 {
		// Process-wide, so before the worker exists.
		worker.SetStickyWorkflowCacheSize(cfg.WorkflowCacheSize)
	}
	fatal := make(chan error, 1)
	w := worker.New(deps.Temporal, cfg.TaskQueue, roles.WorkerOptions(worker.Options{
		DeploymentOptions:                versioning,
		MaxConcurrentWorkflowTaskPollers: cfg.WorkflowPollers,
		MaxConcurrentActivityTaskPollers: cfg.ActivityPollers,
		OnFatalError: func(err error) {
			probe.Fatal(err)
			select {
			case fatal <- err:
			default:
			}
		},
	}))
	deps.RegisterRoles(w, roles)

	logger.Info("worker starting", zap.Int("tools", len(deps.Registry.Specs())), zap.String("roles", cfg.WorkerRoles), zap.Int("gogc", gogc),
		zap.String("deployment", versioning.Version.DeploymentName), zap.String("build_id", versioning.Version.BuildID))
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	probe.Started()
	select {
	case <-ctx.Done():
	case err := <-fatal:
		return fmt.Errorf("worker stopped: %w", err)
	}
	logger.Info("worker stopping")
	w.Stop()
	return nil
}

// serveCodec serves the codec server on CARTWRIGHT_CODEC_ADDR ("off": not
// at all) until the returned func drains it.
func serveCodec(d *wiring.Deps) (func(), error) {
	addr := d.Config.CodecAddr
	if addr == "" || addr == "off" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("codec server: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: d.Codec, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	// HTTPS when configured: the Web UI passes staff access tokens only to
	// an https:// codec endpoint (docs/operators.md#sign-in-on-the-cluster).
	cert, key := d.Config.CodecTLSCert, d.Config.CodecTLSKey
	go func() {
		var err error
		if cert != "" {
			err = srv.ServeTLS(ln, cert, key)
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.Logger.Error("codec server stopped", zap.Error(err))
		}
	}()
	d.Logger.Info("codec server listening", zap.String("addr", ln.Addr().String()), zap.String("path", codecserver.PathPrefix))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// serveHealth serves the probes on addr until the returned func stops it.
func serveHealth(addr string, probe *health.Probe, logger *zap.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health endpoint: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: probe.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("health endpoint stopped", zap.Error(err))
		}
	}()
	logger.Info("health endpoint listening", zap.String("addr", ln.Addr().String()))
	return func() { _ = srv.Close() }, nil
}

// serveWebhook serves the Stripe webhook receiver on CARTWRIGHT_WEBHOOK_ADDR
// until the returned func drains it.
func serveWebhook(d *wiring.Deps) (func(), error) {
	addr := d.Config.WebhookAddr
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: listen on %s: %w", addr, err)
	}
	srv := d.Webhook.Server(addr)
	if d.Telemetry != nil {
		srv.Handler = d.Telemetry.Product.Webhook(srv.Handler, webhook.Path)
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.Logger.Error("webhook receiver stopped", zap.Error(err))
		}
	}()
	d.Logger.Info("webhook receiver listening", zap.String("addr", ln.Addr().String()), zap.String("path", webhook.Path))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
