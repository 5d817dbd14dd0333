package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// TemporalAddress is the dev server `make test` started.
func TemporalAddress() string {
	if v := os.Getenv("CARTWRIGHT_TEST_TEMPORAL_ADDRESS"); v != "" {
		return v
	}
	return "127.0.0.1:7243"
}

// StripeAPIBase is the stripe-mock `make test` started.
func StripeAPIBase() string {
	if v := os.Getenv("CARTWRIGHT_TEST_STRIPE_API_BASE"); v != "" {
		return v
	}
	return "http://127.0.0.1:12112"
}

// TemporalClient connects to the test dev server, closed at cleanup.
func TemporalClient(t testing.TB) client.Client {
	t.Helper()
	Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: TemporalAddress(), Namespace: "default"})
	if err != nil {
		t.Fatalf("testenv: dial temporal at %s: %v — run `make test` or start the stack", TemporalAddress(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// TaskQueue returns a task queue unique to t, so tests sharing one dev
// server never steal each other's tasks.
func TaskQueue(t testing.TB) string {
	return "test-" + randomHex(6)
}
