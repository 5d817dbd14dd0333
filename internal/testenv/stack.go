package testenv

import (
	"os"
	"testing"
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

// TaskQueue returns a task queue unique to t, so tests sharing one dev
// server never steal each other's tasks.
func TaskQueue(t testing.TB) string {
	return "test-" + randomHex(6)
}
