package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// A draft order's generation is the code path it follows, chosen by the
// start and kept in its input for the run's whole life
// (docs/performance.md#generations). A version marker chooses the path
// inside the run instead, and each one a run records costs two history
// events and a visibility write (the marker and the SDK's
// TemporalChangeVersion upsert); a generation costs nothing, because the
// start event already holds it. Runs started without one (generation 0:
// older clients, a hand-made start) ask their version markers as before.
const (
	// GenerationLocalWrite: the read-only tools run as local activities
	// (changeLocalTools' path, without its marker) and the draft order's
	// write makes its first attempt in the worker too, handing over to
	// the regular activity when that attempt fails (localFirst). It stands
	// for every earlier change at its current version.
	GenerationLocalWrite = 1
	// GenerationQuoteRound: as GenerationLocalWrite, and the first quote
	// round's five calls are made ahead in one local activity
	// (prefetchRound), whose answers the workflow's own calls take.
	GenerationQuoteRound = 2
	// CurrentGeneration is what client.StartDraftOrder stamps on every
	// start.
	CurrentGeneration = GenerationQuoteRound
)

// startState is the CartwrightState a draft order is started with. On
// GenerationLocalWrite it is where the order will rest if nothing stops
// it, NEEDS_USER_CONFIRMATION: the quoting task that follows publishes the
// total within milliseconds, and an upsert to say so would cost a history
// event and a visibility write. The attribute moves away from it only when
// the order is to rest somewhere else: a support-staff approval, an outage
// waited out (showStateWhileWaiting), an end. Runs without a generation
// start in QUOTING and upsert every state they rest in, as they always did
// (docs/performance.md#search-attributes).
func startState(generation int) string {
	if generation >= GenerationLocalWrite {
		return StateNeedsConfirm
	}
	return StateQuoting
}

// checkGeneration refuses a generation this build does not know: a start
// from a newer client must not run an older path silently.
func checkGeneration(g int) *toolkit.Error {
	if g < 0 || g > CurrentGeneration {
		return refuse("generation", "generation %d is not one this worker runs (0 to %d); it is set by the start, not by callers", g, CurrentGeneration)
	}
	return nil
}

// localWriteKey marks a workflow context whose run is on
// GenerationLocalWrite.
type localWriteKey struct{}

// withGeneration is withLocalTools for a run with a generation: no marker,
// the answer is the input's. Runs without one ask changeLocalTools.
func withGeneration(ctx workflow.Context, g int) (workflow.Context, bool) {
	if g < GenerationLocalWrite {
		return withLocalTools(ctx)
	}
	ctx = workflow.WithValue(ctx, localToolsKey{}, true)
	return workflow.WithValue(ctx, localWriteKey{}, true), true
}

// onLocalWrite reports whether ctx is a run on GenerationLocalWrite.
func onLocalWrite(ctx workflow.Context) bool {
	on, _ := ctx.Value(localWriteKey{}).(bool)
	return on
}

// localFirstTools make their first attempt as a local activity on
// GenerationLocalWrite. The draft order's write is idempotent (keyed by the
// user's idempotency key) and goes to the same PostgreSQL the read-only
// tools read; run in the worker, it saves the confirmation its activity
// task and a workflow task. Its retries stay the server's: any failure of
// that attempt a retry could fix hands the call to the regular activity.
var localFirstTools = map[string]bool{
	commerce.ToolCreateDraftOrder: true,
}

// runsLocalFirst reports whether this call makes its first attempt as a
// local activity.
func runsLocalFirst(ctx workflow.Context, spec toolkit.Spec) bool {
	return onLocalWrite(ctx) && localFirstTools[spec.Name] && !spec.Annotations.OpenWorld
}
