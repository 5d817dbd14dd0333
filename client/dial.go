package client

// The worker, the CLI, the auditor and the backend client dial Temporal the
// same way: options from the SDK's standard TEMPORAL_* environment
// configuration (address, namespace, TLS, API key, profile file), logs
// through the redacting zap logger.

import (
	"context"
	"fmt"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.uber.org/zap"
)

// SDKOptionsFromEnv loads the SDK client options from the environment (TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE, TEMPORAL_TLS*, TEMPORAL_API_KEY, TEMPORAL_PROFILE …).
func SDKOptionsFromEnv(logger *zap.Logger) (sdkclient.Options, error) {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return sdkclient.Options{}, fmt.Errorf("temporal client configuration: %w", err)
	}
	if logger != nil {
		opts.Logger = TemporalLogger(logger)
	}
	return opts, nil
}

// Dial connects with SDKOptionsFromEnv and checks the server answers: the
// raw SDK client, for processes that run workers or replayers.
func Dial(ctx context.Context, logger *zap.Logger) (sdkclient.Client, error) {
	opts, err := SDKOptionsFromEnv(logger)
	if err != nil {
		return nil, err
	}
	c, err := sdkclient.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to temporal at %s: %w", hostPort(opts), err)
	}
	return c, nil
}

func hostPort(o sdkclient.Options) string {
	if o.HostPort == "" {
		return sdkclient.DefaultHostPort
	}
	return o.HostPort
}
