package wiring

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/telemetry"
)

// Telemetry builds a long-running process's metrics and tracing (OTLP when
// OTEL_* configures it) and installs them as the process's globals, so the
// Temporal client dialled after it (client.SDKOptions) reports through
// them. Call it first; flush with its Shutdown at exit.
func Telemetry(ctx context.Context, service string) (*telemetry.Telemetry, error) {
	t, err := telemetry.New(ctx, telemetry.Options{Service: service, TracesFromEnv: true})
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t.Install()
	return t, nil
}

// ServeMetrics serves t's Prometheus text at /metrics on addr ("" or
// "off": not at all) until the returned func stops it.
func ServeMetrics(addr string, t *telemetry.Telemetry, logger *zap.Logger) (func(), error) {
	if addr == "" || addr == "off" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics endpoint: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", t.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics endpoint stopped", zap.Error(err))
		}
	}()
	logger.Info("metrics endpoint listening", zap.String("addr", ln.Addr().String()), zap.String("path", "/metrics"),
		zap.Bool("tracing", t.Tracing))
	return func() { _ = srv.Close() }, nil
}

// ObserveWaiting registers the approvals and confirmations waiting gauges,
// counted in Temporal visibility on the process's task queue at most every
// maxAge; one process per deployment does it (the worker with the
// schedules role).
func (d *Deps) ObserveWaiting(maxAge time.Duration) error {
	if d.Telemetry == nil {
		return nil
	}
	src := func(ctx context.Context) (telemetry.Waiting, error) {
		return client.CountWaiting(ctx, d.Temporal, d.Config.TaskQueue)
	}
	return d.Telemetry.Product.ObserveWaiting(src, maxAge)
}
