package draftorder

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// confirmMsg is one confirmation for the main coroutine, in arrival
// order: a confirm signal's raw payload, or a confirm_total update's ask.
type confirmMsg struct {
	raw converter.RawValue
	ask *confirmAsk
}

// confirmAsk is a confirm_total update waiting for its answer.
type confirmAsk struct {
	hash string
	// answered: the main coroutine took it (taken) or refused it.
	answered bool
	// taken: this confirmation, or an equal one before it, was accepted;
	// first: it was this one.
	taken, first bool
	refusal      *workflows.RejectedSignal
}

// acceptConfirm checks one confirmation against the published quote_hash
// (confirmRefusal, the rule the update's validator also applies); a
// refused signal is recorded as rejected, a refused update answered.
func (d *draftOrder) acceptConfirm(ctx workflow.Context, m confirmMsg) bool {
	hash := ""
	if m.ask != nil {
		hash = m.ask.hash
	} else {
		var sig ConfirmSignal
		if err := workflows.DecodeSignal(m.raw, &sig); err != nil {
			d.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalConfirm, Reason: workflows.RejectMalformed, Detail: err.Error()})
			return false
		}
		hash = sig.QuoteHash
	}
	if reason, detail := d.confirmRefusal(hash); reason != "" {
		d.refuseConfirmMsg(ctx, m, reason, detail)
		return false
	}
	d.confirmedHash = hash
	if m.ask != nil {
		m.ask.answered, m.ask.taken, m.ask.first = true, true, true
	}
	return true
}

// confirmRefusal is why a confirmation of hash cannot be taken now ("" when
// it can): no confirmation is awaited, or hash is not the published one.
func (d *draftOrder) confirmRefusal(hash string) (reason, detail string) {
	if !d.awaitingConfirm || d.confirmation == nil {
		return workflows.RejectNotWaiting, fmt.Sprintf("no confirmation is awaited (state %s)", d.state)
	}
	if hash != d.confirmation.QuoteHash {
		detail := "quote_hash is not the published one; read it from the status query"
		if d.confirmation.PreviousQuoteHash != "" && hash == d.confirmation.PreviousQuoteHash {
			detail = "the price changed since this quote_hash was confirmed; confirm the new total"
		}
		return workflows.RejectStaleQuoteHash, detail
	}
	return "", ""
}

// refuseConfirmMsg records a refused signal, or answers a refused update
// (its caller gets the reason; the signal log is for signals).
func (d *draftOrder) refuseConfirmMsg(ctx workflow.Context, m confirmMsg, reason, detail string) {
	if m.ask == nil {
		d.log.Reject(ctx, workflows.RejectedSignal{Signal: SignalConfirm, Reason: reason, Detail: detail})
		return
	}
	m.ask.answered = true
	m.ask.refusal = &workflows.RejectedSignal{Signal: UpdateConfirm, Reason: reason, Detail: detail, At: workflows.FmtTime(workflow.Now(ctx))}
}

// refuseQueuedConfirms answers confirms queued behind the accepted one: a
// signal is refused as before; an update for the accepted hash shares its
// outcome ("already done"), one for another hash is refused.
func (d *draftOrder) refuseQueuedConfirms(ctx workflow.Context) {
	for _, m := range d.confirms {
		switch {
		case m.ask == nil:
			d.refuseConfirm(ctx, m.raw)
		case m.ask.hash == d.confirmedHash:
			m.ask.answered, m.ask.taken = true, true
		default:
			d.refuseConfirmMsg(ctx, m, workflows.RejectNotWaiting, "another quote_hash was confirmed first")
		}
	}
	d.confirms = nil
}

// expiredResult ends a draft order nobody confirmed in time.
func (d *draftOrder) expiredResult() *Result {
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
	// The payload first: the Web UI (2.42) shows current details in a
	// frame of fixed height, and what follows the facts is cut off until
	// one scrolls it. Inline code alone in its paragraph, since the UI
	// drops fenced blocks (docs/approvals.md#in-the-web-ui).
	b.WriteString(fmt.Sprintf("Send signal `%s` with:\n\n`%s`\n\n", SignalConfirm, c.Example))
	b.WriteString(fmt.Sprintf("- total: %s", c.GrandTotal.Display()))
	if c.DueOnDelivery.Amount > 0 {
		b.WriteString(fmt.Sprintf(" (+ %s duty and tax due on delivery)", c.DueOnDelivery.Display()))
	}
	b.WriteString(fmt.Sprintf("\n- quote_hash: `%s`\n- prices held until %s (a later confirmation re-quotes)\n- confirm before %s\n",
		c.QuoteHash, workflows.FmtTime(c.QuoteExpiresAt), workflows.FmtTime(c.ConfirmBy)))
	b.WriteString(assumedDetails(d.total))
	b.WriteString(d.originDetails())
	return b.String()
}

// create writes the draft order with the user's idempotency key: a retry,
// a replay or a second start of the same workflow id yields the same row.
func (d *draftOrder) create(ctx workflow.Context, hash string) (*Result, error) {
	d.pastCancel = true
	// The write runs inside this workflow task (local-first) and CREATING
	// lasts milliseconds, like PRICING (enterPricing): the search attribute
	// moves to it only if the write hands over to its regular activity,
	// which may wait out an outage.
	d.state = StateCreating
	handover := func(ctx workflow.Context) error { return d.setState(ctx, StateCreating) }
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
	draft, env, err := flow.CallTool[commerce.DraftOrder](ctx, d.specs, flow.Call{
		Tool:     commerce.ToolCreateDraftOrder,
		InWorker: true,
		Wrap:     d.outliving(commerce.ToolCreateDraftOrder),
		Handover: handover,
		Req:      flow.Envelope(ctx, d.in.Request, step),
		Args:     commerce.CreateDraftOrderArgs{Total: *d.total, ConfirmedQuoteHash: hash, ShipTo: d.in.ShipTo},
		Summary:  fmt.Sprintf("%s: %s", commerce.ToolCreateDraftOrder, d.total.GrandTotal.Display()),
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

// assumedDetails says what the total assumed, as the status does
// (docs/tools.md#exchange-rates): the exchange rates it was priced with
// (source and date) and any tax it does not model.
func assumedDetails(t *commerce.Total) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	if fx := t.FXRates; fx != nil {
		b.WriteString(fmt.Sprintf("- exchange rates: %s of %s (base %s)\n", strings.ReplaceAll(fx.Source, "_", " "), fx.Date, fx.Base))
	}
	if len(t.TaxNotModelled) > 0 {
		b.WriteString(fmt.Sprintf("- not modelled: %s (the tax may be higher)\n", strings.ReplaceAll(strings.Join(t.TaxNotModelled, ", "), "_", " ")))
	}
	return b.String()
}
