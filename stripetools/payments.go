package stripetools

import (
	"context"
	"errors"
	"strings"

	"github.com/stripe/stripe-go/v76"
)

// IntentRequest is a PaymentIntent to create: a destination charge
// (docs/payments.md#the-charge) of Amount to the customer, Fee kept by
// the platform, the rest transferred to Destination, the merchant's
// connected account. IdempotencyKey makes a retry return the same intent.
type IntentRequest struct {
	Amount         int64
	Currency       string
	Fee            int64
	Destination    string
	IdempotencyKey string
	// Metadata is shown in Stripe's dashboard and comes back in webhooks
	// (ids only, never personal data).
	Metadata map[string]string
}

// Intent is what cartwright keeps of a PaymentIntent.
type Intent struct {
	ID          string
	Status      string
	Amount      int64
	Currency    string
	Fee         int64
	Destination string
	// ClientSecret lets the customer's browser confirm the payment: a
	// credential, never logged nor kept in clear (payments.go's tools put
	// it under the masked "secret" key).
	ClientSecret string
}

// Intent statuses cartwright acts on (Stripe's names).
const (
	IntentSucceeded = string(stripe.PaymentIntentStatusSucceeded)
	IntentCanceled  = string(stripe.PaymentIntentStatusCanceled)
)

// CreateIntent creates (or, for a repeated idempotency key, returns) a
// PaymentIntent.
func (c *Client) CreateIntent(ctx context.Context, r IntentRequest) (Intent, error) {
	p := &stripe.PaymentIntentParams{
		Params:                  stripe.Params{Context: ctx},
		Amount:                  stripe.Int64(r.Amount),
		Currency:                stripe.String(strings.ToLower(r.Currency)),
		AutomaticPaymentMethods: &stripe.PaymentIntentAutomaticPaymentMethodsParams{Enabled: stripe.Bool(true)},
		TransferData:            &stripe.PaymentIntentTransferDataParams{Destination: stripe.String(r.Destination)},
		ApplicationFeeAmount:    stripe.Int64(r.Fee),
	}
	for k, v := range r.Metadata {
		p.AddMetadata(k, v)
	}
	p.SetIdempotencyKey(r.IdempotencyKey)
	pi, err := c.intents.New(p)
	if err != nil {
		return Intent{}, mapError(ctx, opPayment, err)
	}
	return intentOf(pi), nil
}

// GetIntent reads a PaymentIntent (the poll when a webhook is late).
func (c *Client) GetIntent(ctx context.Context, id string) (Intent, error) {
	pi, err := c.intents.Get(id, &stripe.PaymentIntentParams{Params: stripe.Params{Context: ctx}})
	if err != nil {
		return Intent{}, mapError(ctx, opPayment, err)
	}
	return intentOf(pi), nil
}

// CancelIntent cancels a PaymentIntent so it can never succeed. One that
// already succeeded (or is being processed) cannot be cancelled: Stripe
// refuses, and the intent as it now stands is returned instead, so the
// caller sees the payment it must honour.
func (c *Client) CancelIntent(ctx context.Context, id, idempotencyKey string) (Intent, error) {
	p := &stripe.PaymentIntentCancelParams{Params: stripe.Params{Context: ctx}}
	p.SetIdempotencyKey(idempotencyKey)
	pi, err := c.intents.Cancel(id, p)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.Code == stripe.ErrorCodePaymentIntentUnexpectedState {
			return c.GetIntent(ctx, id)
		}
		return Intent{}, mapError(ctx, opPayment, err)
	}
	// Stripe answers a cancel it performed with the intent canceled; a
	// stand-in that answers a canned object (stripe-mock) is held to
	// that contract too.
	out := intentOf(pi)
	out.Status = IntentCanceled
	return out, nil
}

func intentOf(pi *stripe.PaymentIntent) Intent {
	in := Intent{ID: pi.ID, Status: string(pi.Status), Amount: pi.Amount, Currency: strings.ToUpper(string(pi.Currency)),
		Fee: pi.ApplicationFeeAmount, ClientSecret: pi.ClientSecret}
	if pi.TransferData != nil && pi.TransferData.Destination != nil {
		in.Destination = pi.TransferData.Destination.ID
	}
	return in
}

// Refund is what cartwright keeps of a Stripe refund.
type Refund struct {
	ID     string
	Status string
	Amount int64
}

// CreateRefund refunds amount of a PaymentIntent's charge: the transfer to
// the connected account is reversed and the platform fee refunded in
// proportion (a destination charge's refund). idempotencyKey makes a
// retry return the same refund.
func (c *Client) CreateRefund(ctx context.Context, intentID string, amount int64, idempotencyKey string) (Refund, error) {
	p := &stripe.RefundParams{
		Params:               stripe.Params{Context: ctx},
		PaymentIntent:        stripe.String(intentID),
		Amount:               stripe.Int64(amount),
		ReverseTransfer:      stripe.Bool(true),
		RefundApplicationFee: stripe.Bool(true),
	}
	p.SetIdempotencyKey(idempotencyKey)
	r, err := c.refunds.New(p)
	if err != nil {
		return Refund{}, mapError(ctx, opPayment, err)
	}
	return Refund{ID: r.ID, Status: string(r.Status), Amount: r.Amount}, nil
}
