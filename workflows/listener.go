package workflows

import (
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// Listener takes a run's signals off their channels as they arrive, every
// channel in one coroutine: a signal is taken as soon as it comes, so none
// is left unhandled when the run ends. A coroutine per channel cost the
// worker a goroutine, its stack and a blocking turn each, on every run
// and every replay (docs/performance.md#one-listener-per-run).
type Listener struct {
	ctx workflow.Context
	sel workflow.Selector
}

// NewListener makes a run's listener; register its signals with On, then
// start it with Listen.
func NewListener(ctx workflow.Context) *Listener {
	return &Listener{sel: workflow.NewSelector(ctx)}
}

// On hands every signal name gets to handle, raw (ReceiveRaw says why).
// Handlers run in the listener's coroutine and must not block.
func (l *Listener) On(ctx workflow.Context, name string, opts workflow.SignalChannelOptions, handle func(workflow.Context, converter.RawValue)) {
	ch := workflow.GetSignalChannelWithOptions(ctx, name, opts)
	l.sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) {
		handle(l.ctx, ReceiveRaw(l.ctx, c))
	})
}

// Listen starts the listener's coroutine, once every signal is
// registered.
func (l *Listener) Listen(ctx workflow.Context) {
	workflow.Go(ctx, func(ctx workflow.Context) {
		l.ctx = ctx
		for {
			l.sel.Select(ctx)
		}
	})
}
