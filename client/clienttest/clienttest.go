package clienttest

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// Dial connects to the test dev server (namespace default), closed at
// cleanup; the test is skipped outside integration runs.
func Dial(t testing.TB) client.Client {
	t.Helper()
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"})
	if err != nil {
		t.Fatalf("clienttest: dial temporal at %s: %v — run `make test` or start the stack", testenv.TemporalAddress(), err)
	}
	t.Cleanup(c.Close)
	return c
}
