package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// The verbs of a written draft order (docs/stock.md, docs/payments.md):
// its settle status with the payment, the client secret to pay with, and a
// cancel until it is paid.

func (a *app) orderStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "order-status WORKFLOW_ID",
		Short: "Print a written draft order's payment and stock hold (kept by the order's own run)",
		Long: `Print the hold (payment and stock) of the draft order WORKFLOW_ID
(draft-order/{user_id}/{idempotency_key}): HOLDING, AWAITING_PAYMENT, then PAID,
PAYMENT_FAILED, CANCELLED or EXPIRED; the hold's end; the payment (intent, status,
amount, platform fee, destination account, the Stripe events taken); the stock
movement once the hold ended.`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(0, func(ctx context.Context, c *client.Client) error {
				st, err := c.OrderStatus(ctx, args[0])
				if err != nil {
					return err
				}
				a.emit(st, func(w io.Writer) { printOrder(w, args[0], st) })
				return nil
			})
		},
	}
}

func (a *app) payCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pay WORKFLOW_ID",
		Short: "Print the payment's client secret, for the customer's browser to pay with",
		Long: `Read the client secret of the draft order's PaymentIntent: the backend hands it to
Stripe.js in the customer's browser, which confirms the payment. The secret is
kept only encrypted in the evidence store; this read is written to its access log
and checked against the hash the order's run holds. The outcome comes back by
Stripe's webhook (order-status shows it).`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(0, func(ctx context.Context, c *client.Client) error {
				st, err := c.OrderStatus(ctx, args[0])
				if err != nil {
					return err
				}
				p := st.Payment
				if p == nil || p.SecretSnapshot == "" {
					return toolkit.Errorf(toolkit.NotFound, "%s has no payment (state %s): a draft order is charged only when it names its merchant", args[0], st.State)
				}
				if st.Result != nil {
					return toolkit.Errorf(toolkit.Conflict, "%s already ended %s: nothing to pay", args[0], st.Result.State)
				}
				secret, err := revealSecret(ctx, p)
				if err != nil {
					return err
				}
				out := map[string]any{"payment_intent_id": p.PaymentIntentID, "client_secret": secret, "amount": p.Amount}
				a.emit(out, func(w io.Writer) {
					fmt.Fprintf(w, "%s: pay %s with PaymentIntent %s\nclient_secret: %s\n", args[0], p.Amount.Display(), p.PaymentIntentID, secret)
				})
				return nil
			})
		},
	}
}

func (a *app) cancelOrderCmd() *cobra.Command {
	var (
		reason string
		wait   time.Duration
	)
	c := &cobra.Command{
		Use:   "cancel-order WORKFLOW_ID",
		Short: "Cancel a written draft order before it is paid: its stock goes back",
		Long: `Cancel the written draft order with the order run's cancel_order update: the
charge is cancelled at Stripe, then the stock is released, and the call returns
once it is. An order paid first is CONFLICT (exit 1): refund it instead.`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(wait, func(ctx context.Context, c *client.Client) error {
				st, err := c.CancelOrder(ctx, args[0], reason)
				if err != nil {
					return err
				}
				a.emit(st, func(w io.Writer) { printOrder(w, args[0], st) })
				return nil
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why (kept in history, not shown in queries)")
	c.Flags().DurationVar(&wait, "wait", 30*time.Second, "wait this long for the stock to be back")
	return c
}

// revealSecret reads the client secret from the evidence store (an
// access-logged read).
func revealSecret(ctx context.Context, p *draftorder.PaymentView) (string, error) {
	cfg, err := config.Load()
	if err != nil {
		return "", toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	pool, err := db.Open(ctx, cfg.PostgresDSN)
	if err != nil {
		return "", toolkit.Errorf(toolkit.UpstreamError, "%v", err)
	}
	defer pool.Close()
	store, err := evidence.NewStoreFromConfig(pool, cfg, zap.NewNop())
	if err != nil {
		return "", toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	return commerce.RevealClientSecret(ctx, store, p.SecretSnapshot, p.SecretSHA256, "starter-cli")
}

// printOrder is the text form of a settle status.
func printOrder(w io.Writer, id string, st draftorder.SettleStatus) {
	fmt.Fprintf(w, "%s: %s (draft order %s, %s, hold until %s, cancellable %v)\n", id, st.State, st.DraftOrderID,
		st.GrandTotal, st.HoldUntil.UTC().Format(time.RFC3339), st.Cancellable)
	if p := st.Payment; p != nil {
		fmt.Fprintf(w, "  payment %s: %s, %s (platform fee %s) to %s; events %v\n", p.PaymentIntentID, p.Status,
			p.Amount.Display(), p.ApplicationFee.Display(), p.Destination, p.Events)
	}
	if s := st.Stock; s != nil {
		fmt.Fprintf(w, "  stock %s (%s) at %s: %v\n", s.State, s.Reason, s.SettledAt.UTC().Format(time.RFC3339), s.Lines)
	}
	if r := st.Result; r != nil {
		fmt.Fprintf(w, "  ended %s: %s\n", r.State, r.Message)
	}
}
