package workflows

import (
	"sort"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
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
//     with the same key starts a new run. A run fails on input Check refuses
//     and on errors no retry fixed; business outcomes (blocked, out of
//     stock, address invalid, cancelled, expired) complete.
//   - A draft order's key is bound to its order: the start carries the
//     input's fingerprint (DraftOrderFingerprint) in the run's memo, and a
//     start that reaches an existing run with another fingerprint is
//     CONFLICT naming the key, never the other order's answer (as Stripe
//     treats a reused idempotency key with other parameters).
//   - Onboardings: one open run per merchant; an ended one starts again
//     (ALLOW_DUPLICATE), because Stripe can ask for more after enablement.
//
// Nothing is refused by a start that Check would have refused: callers
// check first, so a bad input neither starts a run nor touches the key.

// startState is the CartwrightState a draft order is started with: where
// it will rest if nothing stops it, NEEDS_USER_CONFIRMATION. The quoting
// task that follows publishes the total within milliseconds, and an upsert
// to say so would cost a history event and a visibility write. The
// attribute moves away from it only when the order is to rest somewhere
// else: a support-staff approval, an outage waited out
// (showStateWhileWaiting), an end (docs/performance.md#search-attributes).
const startState = StateNeedsConfirm

// MemoInputFingerprint is the memo field holding a draft order's input
// fingerprint.
const MemoInputFingerprint = "input_fingerprint"

// DraftOrderStartOptions are the options every caller starts a draft order
// with; in must be the checked input (DraftOrderInput.Check), so defaults
// are part of its fingerprint.
func DraftOrderStartOptions(taskQueue string, in DraftOrderInput) (client.StartWorkflowOptions, error) {
	id, err := DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	fp, err := DraftOrderFingerprint(in)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	opts := onceStartOptions(id, taskQueue, FlowDraftOrder, startState, "draft order")
	opts.Memo = map[string]any{MemoInputFingerprint: fp}
	return opts, nil
}

// OnboardingStartOptions are the options every caller (client, webhook
// receiver) starts or signal-starts a merchant's onboarding with.
func OnboardingStartOptions(taskQueue, merchantID string) (client.StartWorkflowOptions, error) {
	id, err := OnboardingID(merchantID)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	opts := startOptions(id, taskQueue, FlowOnboarding, OnboardingReadingMerchant, "Stripe onboarding of "+merchantID)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	return opts, nil
}

// onceStartOptions start the run of id at most once per success: attach
// while it is open, keep a completed run, start again after a failed one.
func onceStartOptions(id, taskQueue, flow, state, summary string) client.StartWorkflowOptions {
	opts := startOptions(id, taskQueue, flow, state, summary)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	return opts
}

// startOptions is what every start has: the id, the queue, attach to an
// open run, and search attributes from the first event.
func startOptions(id, taskQueue, flow, state, summary string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    StartSearchAttributes(flow, state),
		StaticSummary:            summary,
	}
}

// fingerprintDoc is what makes two draft orders the same order: who, what,
// where, how and in which currency, with defaults filled. Request ids,
// trace, session, locale, client and the windows are how the order was
// asked for, not what was ordered, and may differ between retries.
type fingerprintDoc struct {
	UserID          string              `json:"user_id"`
	Items           []commerce.LineItem `json:"items"`
	ShipTo          commerce.Address    `json:"ship_to"`
	Currency        string              `json:"currency"`
	ShippingService string              `json:"shipping_service"`
	Incoterm        string              `json:"incoterm"`
	DryRun          bool                `json:"dry_run"`
}

// DraftOrderFingerprint is "sha256:" and the hex SHA-256 of the canonical
// JSON (RFC 8785) of the order's identity (fingerprintDoc), items in SKU
// order. It holds no PII in clear; it is kept in the run's memo
// (MemoInputFingerprint) and compared when a start reaches an existing run.
func DraftOrderFingerprint(in DraftOrderInput) (string, error) {
	doc := fingerprintDoc{
		UserID: in.Request.UserID, Items: append([]commerce.LineItem(nil), in.Items...), ShipTo: in.ShipTo,
		Currency: strings.ToUpper(in.Currency), ShippingService: in.ShippingService, Incoterm: in.Incoterm,
		DryRun: in.Request.DryRun,
	}
	sort.SliceStable(doc.Items, func(i, j int) bool { return doc.Items[i].SKU < doc.Items[j].SKU })
	doc.ShipTo.Country = strings.ToUpper(strings.TrimSpace(doc.ShipTo.Country))
	return toolkit.CanonicalHash(doc)
}
