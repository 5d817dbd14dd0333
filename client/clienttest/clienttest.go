// Package clienttest dials the Temporal dev server `make test` starts, for
// integration tests in any package, with the test stacks' payload codec
// (codectest): what the test workers write is encrypted as in production.
package clienttest

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// Dial connects to the test dev server (namespace default), closed at
// cleanup; the test is skipped outside integration runs.
func Dial(t testing.TB) client.Client {
	t.Helper()
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := client.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
	codec.Apply(&opts, codectest.Codec())
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		t.Fatalf("clienttest: dial temporal at %s: %v — run `make test` or start the stack", testenv.TemporalAddress(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// DataConverter is the data converter of the clients Dial makes: what an
// audit's replayer or a test decoding a history by hand needs.
func DataConverter() converter.DataConverter { return codectest.DataConverter() }
