package toolkit

import "context"

// Phase names a step of the pipeline (docs/tools.md#pipeline) as metrics
// and traces label it.
type Phase string

// The five timed phases of a call.
const (
	PhasePreflight Phase = "preflight"
	PhaseExec      Phase = "exec"
	PhaseValidate  Phase = "validate"
	PhaseSanitize  Phase = "sanitize"
	PhaseEvidence  Phase = "evidence"
)

// Outcome is what an Observer learns when a call leaves the pipeline: only
// bounded values (no ids, no user data), so every field may be a metric
// label.
type Outcome struct {
	// Tool is the registered name, or "unregistered" for a name the
	// registry does not hold (a caller chooses it: not a label value).
	Tool   string
	Status Status
	// Code is the closed-set error code, "" on success.
	Code Code
	// Origin is the caller's actor type (user, agent, system).
	Origin ActorType
	// Denied is true when the call was refused before the tool ran.
	Denied bool
	// BytesIn and BytesOut are the sizes of the input and of the output
	// as JSON (0 when the call did not get that far).
	BytesIn, BytesOut int
}

// Observer watches the invoker: metrics and trace spans live behind it, so
// the toolkit needs neither an exporter nor the Temporal SDK. The worker's
// wiring sets one (package internal/telemetry); without it nothing is
// observed.
type Observer interface {
	// Call opens the span of one call; done closes it with its outcome.
	Call(ctx context.Context, tool string) (context.Context, func(Outcome))
	// Phase opens the span of one phase of a call; done closes it and
	// records its latency (err: the phase failed).
	Phase(ctx context.Context, tool string, p Phase) (context.Context, func(err error))
	// TraceID is the W3C trace id of the span in ctx, "" without one; the
	// evidence snapshot keeps it, so an auditor goes from a trace to its
	// evidence and back.
	TraceID(ctx context.Context) string
}

// UnregisteredTool is the Outcome.Tool of a call to a name the registry
// does not hold.
const UnregisteredTool = "unregistered"

type nopObserver struct{}

func (nopObserver) Call(ctx context.Context, _ string) (context.Context, func(Outcome)) {
	return ctx, func(Outcome) {}
}

func (nopObserver) Phase(ctx context.Context, _ string, _ Phase) (context.Context, func(error)) {
	return ctx, func(error) {}
}

func (nopObserver) TraceID(context.Context) string { return "" }

// Observe sets the invoker's observer (nil: none). Call it while wiring,
// before the first call.
func (inv *Invoker) Observe(o Observer) {
	if o == nil {
		o = nopObserver{}
	}
	inv.obs = o
}
