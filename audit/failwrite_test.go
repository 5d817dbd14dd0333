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

// failFirstLocalWrite is a worker interceptor that fails the first
// in-process attempt of the draft order's write, as a database outage
// would (UPSTREAM_ERROR, retryable), so the write hands over to its
// regular activity (docs/performance.md#local-first-write).
type failFirstLocalWrite struct {
	interceptor.WorkerInterceptorBase
	failed atomic.Bool
}

func (f *failFirstLocalWrite) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &failWriteInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, owner: f}
}

type failWriteInbound struct {
	interceptor.ActivityInboundInterceptorBase
	owner *failFirstLocalWrite
}

func (a *failWriteInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if activity.GetInfo(ctx).IsLocalActivity && len(in.Args) == 1 {
		if call, ok := in.Args[0].(activities.CallToolInput); ok && call.Call.Tool == commerce.ToolCreateDraftOrder &&
			a.owner.failed.CompareAndSwap(false, true) {
			return nil, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "injected: the database is unavailable"))
		}
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// failFirstQuoteRound is a worker interceptor that fails the first quote
// round (generation 2) as an outage would, so the workflow makes the
// round's calls itself (docs/performance.md#quote-round).
type failFirstQuoteRound struct {
	interceptor.WorkerInterceptorBase
	failed atomic.Bool
}

func (f *failFirstQuoteRound) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &failRoundInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, owner: f}
}

type failRoundInbound struct {
	interceptor.ActivityInboundInterceptorBase
	owner *failFirstQuoteRound
}

func (a *failRoundInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if activity.GetInfo(ctx).ActivityType.Name == "QuoteRound" && a.owner.failed.CompareAndSwap(false, true) {
		return nil, activities.ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "injected: the database is unavailable"))
	}
	return a.Next.ExecuteActivity(ctx, in)
}
