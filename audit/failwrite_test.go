package audit_test

import (
	"context"
	"sync/atomic"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// failFirst is a worker interceptor that fails the first activity match
// picks as a database outage would (UPSTREAM_ERROR, retryable).
type failFirst struct {
	interceptor.WorkerInterceptorBase
	match  func(ctx context.Context, in *interceptor.ExecuteActivityInput) bool
	failed atomic.Bool
}

// failFirstLocalWrite fails the first in-process attempt of the draft
// order's write, so it hands over to its regular activity
// (docs/performance.md#local-first-write).
func failFirstLocalWrite() *failFirst {
	return &failFirst{match: func(ctx context.Context, in *interceptor.ExecuteActivityInput) bool {
		if !activity.GetInfo(ctx).IsLocalActivity || len(in.Args) != 1 {
			return false
		}
		call, ok := in.Args[0].(activities.CallToolInput)
		return ok && call.Call.Tool == commerce.ToolCreateDraftOrder
	}}
}

// failFirstQuote fails the first attempt of the first quote step, so its
// local activity is retried (workflows/internal/flow.Steps).
func failFirstQuote() *failFirst {
	return &failFirst{match: func(ctx context.Context, _ *interceptor.ExecuteActivityInput) bool {
		return activity.GetInfo(ctx).ActivityType.Name == "Quote"
	}}
}

func (f *failFirst) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &failFirstInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, owner: f}
}

type failFirstInbound struct {
	interceptor.ActivityInboundInterceptorBase
	owner *failFirst
}

func (a *failFirstInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if a.owner.match(ctx, in) && a.owner.failed.CompareAndSwap(false, true) {
		return nil, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "injected: the database is unavailable"))
	}
	return a.Next.ExecuteActivity(ctx, in)
}
