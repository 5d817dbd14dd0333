package clienttest

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/converter"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/servicetoken"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// Dial connects to the test dev server (namespace default), closed at
// cleanup; the test is skipped outside integration runs.
func Dial(t testing.TB) client.Client {
	t.Helper()
	testenv.Integration(t)
	return DialAt(t, testenv.TemporalAddress())
}

// DialAt connects to the dev server at address (one a test started
// itself, testenv.StartDevServer), retrying while it starts.
func DialAt(t testing.TB, address string) client.Client {
	t.Helper()
	opts := client.Options{HostPort: address, Namespace: "default"}
	tlsCfg, err := TLSFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	opts.ConnectionOptions.TLS = tlsCfg
	codec.Apply(&opts, codectest.Codec())
	// On a cluster that authorizes calls, the identity the environment
	// names (docs/operators.md#sign-in-on-the-cluster).
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	token, err := servicetoken.Func(cfg.OIDC)
	if err != nil {
		t.Fatal(err)
	}
	if token != nil {
		opts.Credentials = client.NewAPIKeyDynamicCredentials(token)
	}
	deadline := time.Now().Add(testenv.Deadline(45 * time.Second))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := client.DialContext(ctx, opts)
		cancel()
		if err == nil {
			t.Cleanup(c.Close)
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("clienttest: dial temporal at %s: %v — run `make test` or start the stack", address, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TLSFromEnv is the TLS configuration the SDK's environment settings
// (TEMPORAL_TLS_*) describe, nil when none are set: the integration tests
// dial the test stack's dev server in plaintext, and `make cluster`'s
// mTLS frontend (docs/operators.md#a-temporal-cluster-make-cluster) when
// its environment file is loaded.
func TLSFromEnv() (*tls.Config, error) {
	o, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return nil, err
	}
	return o.ConnectionOptions.TLS, nil
}

// DataConverter is the data converter of the clients Dial makes: what an
// audit's replayer or a test decoding a history by hand needs.
func DataConverter() converter.DataConverter { return codectest.DataConverter() }
