package gateway

import (
	"context"

	"github.com/cartwright-dev/cartwright/toolkit"
)

type corrKey struct{}

func withCorrelation(ctx context.Context, corr string) context.Context {
	return context.WithValue(ctx, corrKey{}, corr)
}

// correlationOf is the request's id; a request that reached a handler
// without one (stdio) gets one here.
func correlationOf(ctx context.Context) string {
	if c, ok := ctx.Value(corrKey{}).(string); ok && c != "" {
		return c
	}
	return toolkit.NewCorrelationID()
}
