package client

// The worker, the CLI, the auditor and the backend client dial Temporal the
// same way: options from the SDK's standard TEMPORAL_* environment
// configuration (address, namespace, TLS, API key, profile file), the
// payload codec from cartwright's (CARTWRIGHT_PAYLOAD_KEYS), logs through
// the redacting zap logger.

import (
	"context"
	"fmt"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/internal/config"
)

// SDKOptionsFromEnv loads the SDK client options from the environment (TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE, TEMPORAL_TLS*, TEMPORAL_API_KEY, TEMPORAL_PROFILE …)
// and cartwright's configuration (the payload codec's key ring).
func SDKOptionsFromEnv(logger *zap.Logger) (sdkclient.Options, error) {
	cfg, err := config.Load()
	if err != nil {
		return sdkclient.Options{}, err
	}
	return SDKOptions(cfg, logger)
}

// SDKOptions is SDKOptionsFromEnv with cartwright's configuration already
// read. It is the one place every SDK client of the project gets its
// payload codec: payloads are encrypted before they leave the process, so
// Temporal's store and anyone reading it without the codec see no
// personal data.
func SDKOptions(cfg config.Config, logger *zap.Logger) (sdkclient.Options, error) {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return sdkclient.Options{}, fmt.Errorf("temporal client configuration: %w", err)
	}
	if logger != nil {
		opts.Logger = TemporalLogger(logger)
	}
	c, err := codec.FromConfig(cfg)
	if err != nil {
		return sdkclient.Options{}, err
	}
	codec.Apply(&opts, c)
	if err := applyToken(&opts, cfg.OIDC); err != nil {
		return sdkclient.Options{}, err
	}
	opts.ConnectionOptions.GrpcCompression = grpcCompression(cfg.GRPCCompression)
	if err := instrumentGlobal(&opts); err != nil {
		return sdkclient.Options{}, err
	}
	return opts, nil
}

// Dial connects with SDKOptions and checks the server answers: the raw SDK
// client, for processes that run workers or replayers.
func Dial(ctx context.Context, cfg config.Config, logger *zap.Logger) (sdkclient.Client, error) {
	opts, err := SDKOptions(cfg, logger)
	if err != nil {
		return nil, err
	}
	c, err := sdkclient.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to temporal at %s: %w", hostPort(opts), err)
	}
	return c, nil
}

// grpcCompression maps CARTWRIGHT_GRPC_COMPRESSION (checked by config)
// to the SDK's option.
func grpcCompression(name string) sdkclient.GrpcCompression {
	if name == "gzip" {
		return &sdkclient.GrpcCompressionGzip{}
	}
	return &sdkclient.GrpcCompressionNone{}
}

func hostPort(o sdkclient.Options) string {
	if o.HostPort == "" {
		return sdkclient.DefaultHostPort
	}
	return o.HostPort
}

// ensureCodec gives SDK options built by hand (without SDKOptions) the
// configured payload codec and the program's token: no client of the
// project writes payloads in clear, or calls without its identity, however
// its options were made.
func ensureCodec(so *sdkclient.Options) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if err := applyToken(so, cfg.OIDC); err != nil {
		return err
	}
	if so.DataConverter != nil {
		return nil
	}
	c, err := codec.FromConfig(cfg)
	if err != nil {
		return err
	}
	codec.Apply(so, c)
	return nil
}
