package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stripe/stripe-go/v76"
	stripewebhook "github.com/stripe/stripe-go/v76/webhook"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/merchant"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// Stable error codes of refused deliveries.
const (
	ErrMethod           = "method_not_allowed"
	ErrBodyTooLarge     = "body_too_large"
	ErrMissingSignature = "missing_signature"
	ErrBadHeader        = "invalid_signature_header"
	ErrStaleTimestamp   = "stale_timestamp"
	ErrBadSignature     = "invalid_signature"
	ErrBadPayload       = "invalid_payload"
	ErrUnsupportedEvent = "unsupported_event_type"
	ErrUnavailable      = "temporarily_unavailable"
)

// Outcomes of accepted deliveries (answer.status).
const (
	StatusSignalled = "signalled"
	StatusDuplicate = "duplicate"
	StatusIgnored   = "ignored_unknown_account"
)

// eventAccountUpdated is the only event type the onboarding flow needs;
// configure the endpoint (or `stripe listen --events`) for it alone.
const eventAccountUpdated = "account.updated"

var (
	eventIDPattern   = regexp.MustCompile(`^evt_[A-Za-z0-9_]{1,255}$`)
	accountIDPattern = regexp.MustCompile(`^acct_[A-Za-z0-9]{1,64}$`)
)

// ServeHTTP handles one delivery. Order matters: size, then signature, then
// content, then the dedup row, then Temporal, so nothing unauthenticated is
// parsed beyond what verification needs and nothing refused leaves a trace.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, http.StatusMethodNotAllowed, ErrMethod, "POST a Stripe event")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rc.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			refuse(w, http.StatusRequestEntityTooLarge, ErrBodyTooLarge, "the body is larger than %d bytes", rc.cfg.MaxBodyBytes)
			return
		}
		refuse(w, http.StatusBadRequest, ErrBadPayload, "the body could not be read")
		return
	}
	ev, code, msg := rc.verify(body, r.Header.Get("Stripe-Signature"))
	if code != "" {
		rc.log.Warn("webhook refused", zap.String("error", code))
		refuse(w, http.StatusBadRequest, code, "%s", msg)
		return
	}
	if paymentEvents[string(ev.Type)] {
		rc.servePayment(w, r.Context(), ev)
		return
	}
	if string(ev.Type) != eventAccountUpdated {
		rc.log.Info("webhook event type not handled", zap.String("event_id", ev.ID), zap.String("event_type", string(ev.Type)))
		refuse(w, http.StatusBadRequest, ErrUnsupportedEvent, "event type %q is not handled; subscribe this endpoint to account.updated, payment_intent.succeeded and payment_intent.payment_failed only", ev.Type)
		return
	}
	account := accountOf(ev)
	if !accountIDPattern.MatchString(account) {
		refuse(w, http.StatusBadRequest, ErrBadPayload, "account.updated names no connected account")
		return
	}
	status, wfID, err := rc.handle(r.Context(), ev, account)
	log := rc.log.With(zap.String("event_id", ev.ID), zap.String("account_id", account), zap.String("workflow_id", wfID))
	if err != nil {
		// 503: Stripe retries the delivery, and the dedup row was rolled
		// back, so the retry is handled as new.
		log.Warn("webhook not processed", zap.Error(err))
		refuse(w, http.StatusServiceUnavailable, ErrUnavailable, "the event could not be processed now; retry later")
		return
	}
	log.Info("webhook handled", zap.String("outcome", status))
	writeJSON(w, http.StatusOK, answer{Status: status, EventID: ev.ID, WorkflowID: wfID})
}

// verify checks the signature against every configured secret and decodes
// the event. A stale timestamp is reported as such only if no secret
// verifies the payload (stripe-go checks the age before the signature).
func (rc *Receiver) verify(body []byte, header string) (stripe.Event, string, string) {
	if header == "" {
		return stripe.Event{}, ErrMissingSignature, "the Stripe-Signature header is missing"
	}
	opts := stripewebhook.ConstructEventOptions{Tolerance: rc.cfg.Tolerance, IgnoreAPIVersionMismatch: true}
	// stripe-go bounds only a signature's age; one dated further ahead than
	// the tolerance is refused the same way (a captured future-dated
	// delivery would otherwise be replayable until that time passes).
	if at, ok := signedAt(header); ok && at.After(time.Now().Add(rc.cfg.Tolerance)) {
		return stripe.Event{}, ErrStaleTimestamp, "the signature's timestamp is outside the tolerance window"
	}
	var firstErr error
	for _, secret := range rc.cfg.Secrets {
		// Signature first, then decoding: an unparseable body that is
		// correctly signed is a payload error, not a signature error.
		err := stripewebhook.ValidatePayloadWithTolerance(body, header, secret, opts.Tolerance)
		if err == nil {
			ev, err := stripewebhook.ConstructEventWithOptions(body, header, secret, opts)
			if err != nil || !eventIDPattern.MatchString(ev.ID) || ev.Data == nil {
				return stripe.Event{}, ErrBadPayload, "the signed body is not a Stripe event"
			}
			return ev, "", ""
		}
		if firstErr == nil || errors.Is(err, stripewebhook.ErrTooOld) {
			firstErr = err
		}
	}
	switch {
	case errors.Is(firstErr, stripewebhook.ErrTooOld):
		return stripe.Event{}, ErrStaleTimestamp, "the signature's timestamp is outside the tolerance window"
	case errors.Is(firstErr, stripewebhook.ErrInvalidHeader) || errors.Is(firstErr, stripewebhook.ErrNotSigned):
		return stripe.Event{}, ErrBadHeader, "the Stripe-Signature header is malformed"
	default:
		return stripe.Event{}, ErrBadSignature, "no signature matches the endpoint's signing secrets"
	}
}

// accountOf is the connected account an account.updated event is about:
// the event's object (an account), else the Connect event's account field.
func accountOf(ev stripe.Event) string {
	if id, ok := ev.Data.Object["id"].(string); ok && id != "" {
		return id
	}
	return ev.Account
}

// handle records the event id and signals the workflow in one transaction:
// the insert-if-absent decides which delivery acts (a concurrent duplicate
// waits on the row's lock and then finds it), and a failed signal rolls the
// row back so Stripe's retry is not mistaken for a duplicate.
func (rc *Receiver) handle(ctx context.Context, ev stripe.Event, account string) (status, workflowID string, err error) {
	m, found, err := rc.merchants.ByStripeAccount(ctx, merchant.AllTenants, account)
	if err != nil {
		return "", "", err
	}
	outcome := StatusSignalled
	if found {
		if workflowID, err = onboardingflow.ID(m.MerchantID); err != nil {
			return "", "", err
		}
	} else {
		outcome = StatusIgnored
	}
	err = pgx.BeginTxFunc(ctx, rc.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO stripe_webhook_events (event_id, event_type, account_id, livemode, outcome, workflow_id)
			VALUES ($1, $2, $3, $4, $5, nullif($6, '')) ON CONFLICT (event_id) DO NOTHING`,
			ev.ID, string(ev.Type), account, ev.Livemode, outcome, workflowID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			status = StatusDuplicate
			return nil
		}
		status = outcome
		if !found {
			return nil
		}
		return rc.signal(ctx, ev, account, m.MerchantID, workflowID)
	})
	return status, workflowID, err
}

// signal delivers account_updated to the merchant's onboarding, starting
// one if none is running (a finished onboarding is started again: new
// requirements can appear after an account was enabled).
func (rc *Receiver) signal(ctx context.Context, ev stripe.Event, account, merchantID, workflowID string) error {
	opts, err := onboardingflow.StartOptions(rc.cfg.TaskQueue, merchantID)
	if err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	if opts.ID != workflowID {
		return toolkit.Errorf(toolkit.InvalidArgument, "onboarding id %s is not %s", workflowID, opts.ID)
	}
	in := onboardingflow.Input{
		MerchantID: merchantID,
		Request: toolkit.Request{
			RequestID: ev.ID, UserID: merchantID,
			Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "stripe-webhook"},
		},
		Deadline: rc.cfg.OnboardingDeadline, ApprovalWindow: rc.cfg.ApprovalWindow,
	}
	sig := onboardingflow.AccountUpdatedSignal{EventID: ev.ID, AccountID: account}
	_, err = rc.temporal.SignalWithStartWorkflow(ctx, workflowID, onboardingflow.SignalAccountUpdated, sig, opts,
		onboardingflow.WorkflowName, in)
	return err
}

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

// signedAt is the t= timestamp of a Stripe-Signature header, if it has a
// well-formed one (a malformed header is stripe-go's to report).
func signedAt(header string) (time.Time, bool) {
	for _, part := range strings.Split(header, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "t="); ok {
			sec, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			return time.Unix(sec, 0), true
		}
	}
	return time.Time{}, false
}
