package flow

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// An order outlives a dependency outage. A tool's own retry policy (its
// ToolSpec's, docs/tools.md#toolspec, applied by toolOptions) bounds ONE call: five
// attempts in a few seconds are right for a flaky answer and wrong for a
// database that is down for a minute. When a call still fails with an
// infrastructure code after its retries, the order runs it again after a
// backoff timer, for as long as its own window allows; business codes are
// answers and are never re-run. When the window is over, the order ends
// with the business result UNAVAILABLE (UPSTREAM_ERROR naming the call and
// what failed), not as a failed workflow. See docs/errors.md#outages.

// Backoff between re-runs of a call that failed on infrastructure.
const (
	outageFirstBackoff = 5 * time.Second
	outageMaxBackoff   = time.Minute
)

// Infrastructure reports whether err is an outage worth waiting out:
// upstream unreachable or failing, timed out, rate limited. A cancelled
// call is not (the workflow is being cancelled).
func Infrastructure(err error) bool {
	if err == nil || temporal.IsCanceledError(err) {
		return false
	}
	switch toolkit.CodeOf(err) {
	case toolkit.UpstreamError, toolkit.Timeout, toolkit.RateLimited:
		return true
	}
	return false
}

// Wait is what an outliving call waits for, handed to Outlive's waiting
// callback before each backoff (Err set) and once when it stops waiting
// (Done): the call, its last error, how many calls were made, when the
// next one starts.
type Wait struct {
	Call      string
	Err       error
	Tries     int
	NextTryAt time.Time
	Done      bool
}

// Outlive starts a tool call with start and, while it fails with an
// infrastructure code and window (counted from now) has not passed, starts
// it again after a growing backoff. The returned future is the last call's.
// window<=0 is one call.
// The first call is started here, synchronously, so parallel calls are
// scheduled in the caller's order. waiting, if set, is told before every
// backoff what the call waits for, and once when it stops waiting.
// interrupt, if set, ends the waiting at once when it turns true (a cancel
// wins over an outage): the last call's error stands.
func Outlive(ctx workflow.Context, window time.Duration, what string, start func(workflow.Context) workflow.Future,
	waiting func(workflow.Context, Wait), interrupt func() bool) workflow.Future {
	first := start(ctx)
	if window <= 0 {
		return first
	}
	deadline := workflow.Now(ctx).Add(window)
	done, settle := workflow.NewFuture(ctx)
	f := &outliveFuture{done: done, last: first}
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer settle.Set(nil, nil)
		backoff := outageFirstBackoff
		waited := false
		defer func() {
			if waited && waiting != nil {
				waiting(ctx, Wait{Call: what, Done: true})
			}
		}()
		for tries := 1; ; tries++ {
			err := f.last.Get(ctx, nil)
			left := deadline.Sub(workflow.Now(ctx))
			if !Infrastructure(err) || left <= 0 || (interrupt != nil && interrupt()) {
				return
			}
			wait := min(backoff, left)
			if waiting != nil {
				waited = true
				waiting(ctx, Wait{Call: what, Err: err, Tries: tries, NextTryAt: workflow.Now(ctx).Add(wait)})
			}
			workflow.GetLogger(ctx).Warn("tool call failed on infrastructure; running it again within the order's window",
				"call", what, "code", toolkit.CodeOf(err), "calls", tries, "backoff", wait, "window_left", left)
			if interrupted, err := sleepUnless(ctx, wait, fmt.Sprintf("outage backoff: %s (%d)", what, tries), interrupt); err != nil || interrupted {
				return // cancelled or interrupted: the last call's error stands
			}
			backoff = min(2*backoff, outageMaxBackoff)
			f.last = start(ctx)
		}
	})
	return f
}

// outliveFuture is ready when outlive stopped re-running; its value and
// error are those of the last call.
type outliveFuture struct {
	done workflow.Future
	last workflow.Future
}

func (f *outliveFuture) Get(ctx workflow.Context, valuePtr any) error {
	_ = f.done.Get(ctx, nil)
	return f.last.Get(ctx, valuePtr)
}

func (f *outliveFuture) IsReady() bool { return f.done.IsReady() }

// sleepUnless waits d on a timer named summary, or until interrupt turns
// true; without interrupt it is the plain timer it always was (the same
// command in the history).
func sleepUnless(ctx workflow.Context, d time.Duration, summary string, interrupt func() bool) (bool, error) {
	if interrupt == nil {
		return false, workflow.NewTimerWithOptions(ctx, d, workflow.TimerOptions{Summary: summary}).Get(ctx, nil)
	}
	ok, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: d, TimerOptions: workflow.TimerOptions{Summary: summary}}, interrupt)
	return ok, err
}
