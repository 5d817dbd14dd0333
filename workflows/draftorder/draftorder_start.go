package draftorder

import (
	"sort"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// startState is the CartwrightState a draft order is started with: where
// it will rest if nothing stops it, NEEDS_USER_CONFIRMATION. The quoting
// task that follows publishes the total within milliseconds, and an upsert
// to say so would cost a history event and a visibility write. The
// attribute moves away from it only when the order is to rest somewhere
// else: a support-staff approval, an outage waited out
// (showStateWhileWaiting), an end (docs/performance.md#search-attributes).
const startState = StateNeedsConfirm

// StartOptions are the options every caller starts a draft order
// with; in must be the checked input (Input.Check), so defaults
// are part of its fingerprint.
func StartOptions(taskQueue string, in Input) (client.StartWorkflowOptions, error) {
	id, err := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	fp, err := Fingerprint(in)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	opts := workflows.OnceStartOptions(id, taskQueue, workflows.FlowDraftOrder, startState, "draft order")
	opts.Memo = map[string]any{workflows.MemoInputFingerprint: fp}
	return opts, nil
}

// fingerprintDoc is what makes two draft orders the same order: who, what,
// where, how and in which currency, with defaults filled. Request ids,
// trace, session, locale, client and the windows are how the order was
// asked for, not what was ordered, and may differ between retries.
type fingerprintDoc struct {
	UserID string `json:"user_id"`
	commerce.Order
	DryRun bool `json:"dry_run"`
}

// Fingerprint is "sha256:" and the hex SHA-256 of the canonical
// JSON (RFC 8785) of the order's identity (fingerprintDoc), items in SKU
// order. It holds no PII in clear; it is kept in the run's memo
// (MemoInputFingerprint) and compared when a start reaches an existing run.
func Fingerprint(in Input) (string, error) {
	doc := fingerprintDoc{UserID: in.Request.UserID, Order: in.Order, DryRun: in.Request.DryRun}
	doc.Items = append([]commerce.LineItem(nil), in.Items...)
	doc.Currency = strings.ToUpper(in.Currency)
	sort.SliceStable(doc.Items, func(i, j int) bool { return doc.Items[i].SKU < doc.Items[j].SKU })
	doc.ShipTo.Country = strings.ToUpper(strings.TrimSpace(doc.ShipTo.Country))
	return toolkit.CanonicalHash(doc)
}
