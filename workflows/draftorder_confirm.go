package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// acceptConfirm checks one confirm signal against the published quote_hash;
// anything else is recorded as rejected.
func (d *draftOrder) acceptConfirm(ctx workflow.Context, raw converter.RawValue) bool {
	var sig ConfirmSignal
	if err := decodeSignal(raw, &sig); err != nil {
		d.log.reject(ctx, RejectedSignal{Signal: SignalConfirm, Reason: RejectMalformed, Detail: err.Error()})
		return false
	}
	if sig.QuoteHash != d.confirmation.QuoteHash {
		detail := "quote_hash is not the published one; read it from the status query"
		if d.confirmation.PreviousQuoteHash != "" && sig.QuoteHash == d.confirmation.PreviousQuoteHash {
			detail = "the price changed since this quote_hash was confirmed; confirm the new total"
		}
		d.log.reject(ctx, RejectedSignal{Signal: SignalConfirm, Reason: RejectStaleQuoteHash, Detail: detail})
		return false
	}
	return true
}

// refuseQueuedConfirms answers confirms queued behind the accepted one.
func (d *draftOrder) refuseQueuedConfirms(ctx workflow.Context) {
	for _, raw := range d.confirms {
		d.refuseConfirm(ctx, raw)
	}
	d.confirms = nil
}

// expiredResult ends a draft order nobody confirmed in time.
func (d *draftOrder) expiredResult() *DraftOrderResult {
	return d.end(StateExpired, toolkit.NeedsUserConfirmation,
		"the user did not confirm the total within "+d.in.ConfirmWindow.String())
}

// confirmDetails renders the pending confirmation for the Web UI.
func (d *draftOrder) confirmDetails() string {
	c := d.confirmation
	var b strings.Builder
	if c.PriceChanged {
		b.WriteString("**PRICE_CHANGED: the user must confirm the new total**\n\n")
	} else {
		b.WriteString("**Waiting for the user to confirm the total**\n\n")
	}
	b.WriteString(fmt.Sprintf("- total: %s", fmtMoney(c.GrandTotal)))
	if c.DueOnDelivery.Amount > 0 {
		b.WriteString(fmt.Sprintf(" (+ %s duty and tax due on delivery)", fmtMoney(c.DueOnDelivery)))
	}
	b.WriteString(fmt.Sprintf("\n- quote_hash: `%s`\n- prices held until %s (a later confirmation re-quotes)\n- confirm before %s\n\n",
		c.QuoteHash, fmtTime(c.QuoteExpiresAt), fmtTime(c.ConfirmBy)))
	// Inline code alone in its paragraph: the Web UI (2.42) drops fenced
	// blocks from current details (docs/approvals.md#in-the-web-ui).
	b.WriteString(fmt.Sprintf("Send signal `%s` with:\n\n`%s`\n", SignalConfirm, c.Example))
	return b.String()
}

// create writes the draft order with the user's idempotency key: a retry,
// a replay or a second start of the same workflow id yields the same row.
func (d *draftOrder) create(ctx workflow.Context, hash string) (*DraftOrderResult, error) {
	d.pastCancel = true
	if err := d.setState(ctx, StateCreating); err != nil {
		return nil, err
	}
	// Each create call of the run gets its own correlation id: a call that
	// ended NEEDS_USER_CONFIRMATION may have closed its two-phase audit as
	// failed, and the audit refuses a closed correlation id (CONFLICT), so
	// the create after a same-price re-quote must not reuse it. The first
	// call keeps the plain step name.
	d.creates++
	step := fmt.Sprintf("create/%s", hash)
	if d.creates > 1 {
		step = fmt.Sprintf("create/%s/%d", hash, d.creates)
	}
	draft, env, err := callTool[commerce.DraftOrder](ctx, d.specs, toolCall{
		tool:    commerce.ToolCreateDraftOrder,
		wrap:    d.outliving(commerce.ToolCreateDraftOrder),
		req:     envelope(ctx, d.in.Request, step),
		args:    commerce.CreateDraftOrderArgs{Total: *d.total, ConfirmedQuoteHash: hash, ShipTo: d.in.ShipTo},
		summary: fmt.Sprintf("%s: %s", commerce.ToolCreateDraftOrder, fmtMoney(d.total.GrandTotal)),
	}).Get(ctx)
	d.recordAnswer("create", env, err)
	if err != nil {
		return nil, err
	}
	d.draft = &draft
	state, msg := StateDraftCreated, "draft order "+draft.DraftOrderID+" created"
	if draft.Status == commerce.DraftStatusValidated {
		state, msg = StateDryRunValidated, "dry run: the draft order was validated and not written"
	}
	return d.end(state, "", msg), nil
}
