// Package tclient dials Temporal the same way from the worker, the CLI and
// the backend client: options from the SDK's standard TEMPORAL_* environment
// configuration (address, namespace, TLS, API key, profile file), logs
// through our redacting zap logger.
package tclient

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Options loads client options from the environment (TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE, TEMPORAL_TLS*, TEMPORAL_API_KEY, TEMPORAL_PROFILE …).
func Options(logger *zap.Logger) (client.Options, error) {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal client configuration: %w", err)
	}
	if logger != nil {
		opts.Logger = toolkit.TemporalLogger(logger)
	}
	return opts, nil
}

// Dial connects with Options and checks the server answers.
func Dial(ctx context.Context, logger *zap.Logger) (client.Client, error) {
	opts, err := Options(logger)
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to temporal at %s: %w", hostPort(opts), err)
	}
	return c, nil
}

func hostPort(o client.Options) string {
	if o.HostPort == "" {
		return client.DefaultHostPort
	}
	return o.HostPort
}
