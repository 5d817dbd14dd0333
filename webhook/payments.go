package webhook

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v76"
	"go.temporal.io/api/serviceerror"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// StatusIgnoredPayment: a payment event for an intent no draft order
// made (recorded, not acted on).
const StatusIgnoredPayment = "ignored_unknown_payment"

// paymentEvents are the PaymentIntent events a draft order's run acts on
// (docs/payments.md#webhooks).
var paymentEvents = map[string]bool{
	draftorder.EventPaymentSucceeded: true,
	draftorder.EventPaymentFailed:    true,
}

var intentIDPattern = regexp.MustCompile(`^pi_[A-Za-z0-9]{1,64}$`)

// servePayment handles a verified payment_intent.* event: the order's run
// is the one the payments table names for the intent (what the event's
// metadata says is not trusted), and it gets the event once (the dedup
// row, as for account events). A duplicate, however often Stripe
// delivers it, signals nothing.
func (rc *Receiver) servePayment(w http.ResponseWriter, ctx context.Context, ev stripe.Event) {
	sig, ok := paymentOf(ev)
	if !ok {
		refuse(w, http.StatusBadRequest, ErrBadPayload, "%s names no PaymentIntent", ev.Type)
		return
	}
	status, wfID, err := rc.handlePayment(ctx, ev, sig)
	log := rc.log.With(zap.String("event_id", ev.ID), zap.String("event_type", string(ev.Type)),
		zap.String("payment_intent_id", sig.PaymentIntentID), zap.String("workflow_id", wfID))
	if err != nil {
		log.Warn("webhook not processed", zap.Error(err))
		refuse(w, http.StatusServiceUnavailable, ErrUnavailable, "the event could not be processed now; retry later")
		return
	}
	log.Info("webhook handled", zap.String("outcome", status))
	writeJSON(w, http.StatusOK, answer{Status: status, EventID: ev.ID, WorkflowID: wfID})
}

// paymentOf reads the intent's id, amount and currency from the event.
func paymentOf(ev stripe.Event) (draftorder.PaymentSignal, bool) {
	obj := ev.Data.Object
	id, _ := obj["id"].(string)
	if !intentIDPattern.MatchString(id) {
		return draftorder.PaymentSignal{}, false
	}
	amount, _ := obj["amount"].(float64)
	currency, _ := obj["currency"].(string)
	return draftorder.PaymentSignal{EventID: ev.ID, Type: string(ev.Type), PaymentIntentID: id,
		Amount: int64(amount), Currency: strings.ToUpper(currency)}, true
}

// handlePayment records the event and signals the draft order's run in one
// transaction (as handle does for account events). A draft order's run that has
// already ended needs nothing more: the event is recorded as signalled.
func (rc *Receiver) handlePayment(ctx context.Context, ev stripe.Event, sig draftorder.PaymentSignal) (status, workflowID string, err error) {
	err = pgx.BeginTxFunc(ctx, rc.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT workflow_id FROM payments WHERE payment_intent_id = $1`, sig.PaymentIntentID).Scan(&workflowID)
		outcome := StatusSignalled
		if errors.Is(err, pgx.ErrNoRows) {
			outcome, workflowID = StatusIgnoredPayment, ""
		} else if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO stripe_webhook_events (event_id, event_type, account_id, livemode, outcome, workflow_id)
			VALUES ($1, $2, nullif($3, ''), $4, $5, nullif($6, '')) ON CONFLICT (event_id) DO NOTHING`,
			ev.ID, string(ev.Type), ev.Account, ev.Livemode, outcome, workflowID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			status = StatusDuplicate
			return nil
		}
		status = outcome
		if workflowID == "" {
			return nil
		}
		err = rc.temporal.SignalWorkflow(ctx, workflowID, "", draftorder.SignalPayment, sig)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil // the run ended (paid, or closed after cancelling the charge)
		}
		return err
	})
	return status, workflowID, err
}
