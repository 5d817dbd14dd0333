package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// Idempotency of starts (docs/envelope.md#idempotency). Every caller (client, starter, webhook receiver)
// builds its StartWorkflowOptions here, beside the id helpers, so the rules
// below hold whoever starts:
//
//   - The workflow id is the key: draft-order/{user_id}/{idempotency_key},
//     tool-call/{user_id}/{key}, onboarding/{merchant_id}.
//   - A second start while the run is open attaches to it (conflict policy
//     USE_EXISTING): one key never runs twice at once.
//   - Draft orders and tool calls: a run that COMPLETED holds its key for
//     good (a second start gets that run and its result: one key, one draft
//     order); a run that FAILED, was TERMINATED, CANCELED or TIMED OUT frees
//     it (reuse policy ALLOW_DUPLICATE_FAILED_ONLY), so a corrected retry
//     with the same key starts a new run. A draft order fails only on input
//     Check refuses; business outcomes (blocked, out of stock, an unknown
//     SKU, address invalid, refused, unavailable, cancelled, expired)
//     complete (docs/errors.md#draft-order-outcomes).
//   - A draft order's key is bound to its order: the start carries the
//     input's fingerprint (draftorder.Fingerprint) in the run's memo, and a
//     start that reaches an existing run with another fingerprint is
//     CONFLICT naming the key, never the other order's answer (as Stripe
//     treats a reused idempotency key with other parameters).
//   - Onboardings: one open run per merchant; an ended one starts again
//     (ALLOW_DUPLICATE), because Stripe can ask for more after enablement.
//
// Nothing is refused by a start that Check would have refused: callers
// check first, so a bad input neither starts a run nor touches the key.

// MemoInputFingerprint is the memo field holding a draft order's input
// fingerprint.
const MemoInputFingerprint = "input_fingerprint"

// OnceStartOptions start the run of id at most once per success: attach
// while it is open, keep a completed run, start again after a failed one.
func OnceStartOptions(id, taskQueue, flow, state, summary string) client.StartWorkflowOptions {
	opts := StartOptions(id, taskQueue, flow, state, summary)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	return opts
}

// StartOptions is what every start has: the id, the queue, attach to an
// open run, and search attributes from the first event.
func StartOptions(id, taskQueue, flow, state, summary string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    StartSearchAttributes(flow, state),
		StaticSummary:            summary,
	}
}
