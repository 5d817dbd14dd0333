package toolkit

import (
	"context"
	"encoding/json"
	"testing"
)

// Every INVALID_ARGUMENT a tool answers carries a recovery_suggestion
// (docs/errors.md#error-object), whether preflight refused the input, the
// handler refused it with a suggestion of its own (kept), or without one
// (the invoker adds one); the snapshot holds the same error object.
func TestEveryInvalidArgumentCarriesARecovery(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    map[string]any
		err   *Error
		wants string
	}{
		{"handler without a suggestion", map[string]any{"country": "DE", "quantity": 1}, Errorf(InvalidArgument, "an order has one currency"), "fix the named fields and call again"},
		{"handler with its own", map[string]any{"country": "DE", "quantity": 1}, Errorf(InvalidArgument, "bad lines").WithRecovery("pass the lines of the price quote unchanged"), "pass the lines of the price quote unchanged"},
		{"preflight", map[string]any{"country": "DE", "quantity": "one"}, nil, "fix the named fields and call again"},
	} {
		inv, sink := newTestInvoker(t, echoSpec(), func(context.Context, *Call) (*Output, error) {
			if c.err == nil {
				return &Output{Data: map[string]any{"ok": true}}, nil
			}
			return nil, c.err
		})
		resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), c.in)
		te := AsError(err)
		if err == nil || te.Code != InvalidArgument || resp.Error == nil || resp.Error.RecoverySuggestion != c.wants {
			t.Errorf("%s: %v, envelope error %+v", c.name, err, resp.Error)
			continue
		}
		if n := sink.count(); n > 0 {
			var stored Error
			if json.Unmarshal(sink.snaps[n-1].Output, &stored) != nil || stored.RecoverySuggestion != c.wants {
				t.Errorf("%s: snapshot holds %s", c.name, sink.snaps[n-1].Output)
			}
		}
	}
}
