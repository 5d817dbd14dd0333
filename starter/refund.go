package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// The verbs of a paid draft order's refunds (docs/payments.md#refunds)
// and of the goods coming back (docs/stock.md#returns).

func (a *app) refundCmd() *cobra.Command {
	var (
		key, reason, user string
		lines             []string
		wait              time.Duration
		untilEnd          bool
	)
	c := &cobra.Command{
		Use:   "refund WORKFLOW_ID --key K [--line SKU=QTY …]",
		Short: "Refund a paid draft order, whole or some lines (staff decide above the configured amount)",
		Long: `Ask for the refund --key of the paid draft order WORKFLOW_ID with the refund update
(started with it: one round trip) and print where it stands: REFUNDED with Stripe's
refund id, or AWAITING_APPROVAL with the approval staff with role refunds or admin
decide (above CARTWRIGHT_REFUND_APPROVAL_ABOVE) and the facts they see; --until-end
waits for their decision. The amount comes from the stored total (--line SKU=QTY
for some lines; none: the whole order, what is left). A refusal (not paid, a line
not in the order, more units than are left) exits with its code (INVALID_ARGUMENT 2),
and the key stays free; the same key is the same refund, never a second one, and with other lines is
CONFLICT. With CARTWRIGHT_REFUND_RESTOCK=on_return a refunded run then waits for
"starter returned".`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := client.RefundRequest{Key: key, Reason: reason, UntilEnd: untilEnd,
				Request: toolkit.Request{UserID: user, Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "starter-cli"}}}
			var err error
			if req.Lines, err = parseLines(lines); err != nil {
				return err
			}
			return a.withClient(wait, func(ctx context.Context, c *client.Client) error {
				st, err := c.Refund(ctx, args[0], req)
				if err != nil {
					return err
				}
				a.emit(st, func(w io.Writer) { printRefund(w, args[0], key, st) })
				if r := st.Result; r != nil && r.State != draftorder.StateRefunded {
					return toolkit.Errorf(r.Code, "refund ended %s: %s", r.State, r.Message)
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&key, "key", "", "the refund's key (required; the same key is the same refund)")
	c.Flags().StringVar(&reason, "reason", "", "shown to the staff who decide")
	c.Flags().StringVar(&user, "user", "", "the user id the refund is for (the draft order's)")
	c.Flags().StringArrayVar(&lines, "line", nil, "SKU=QTY to refund (repeat; none: the whole order)")
	c.Flags().BoolVar(&untilEnd, "until-end", false, "wait past a staff decision for the refund's end")
	c.Flags().DurationVar(&wait, "wait", 30*time.Second, "wait this long for an answer")
	return c
}

func (a *app) returnedCmd() *cobra.Command {
	var (
		key, note string
		lines     []string
		wait      time.Duration
	)
	c := &cobra.Command{
		Use:   "returned WORKFLOW_ID --key K [--line SKU=QTY …]",
		Short: "Tell a refund that its goods came back: the units go back on hand, once",
		Long: `Send the returned signal to the refund run --key of the draft order WORKFLOW_ID and
wait until it took it: the units (--line SKU=QTY; none: every line the refund
covered) go back on hand in the warehouses they were committed from, exactly once,
with evidence. A return recorded before is printed as it is (nothing moves again);
more units than the order committed (less earlier returns), or lines this refund did
not cover, exit 2 with INVALID_ARGUMENT and the run waits on for a correct return. A
refund made while CARTWRIGHT_REFUND_RESTOCK=never never restocks (CONFLICT).`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sig := draftorder.ReturnedSignal{Note: note}
			var err error
			if sig.Lines, err = parseLines(lines); err != nil {
				return err
			}
			if key == "" {
				return usagef("--key is required (the refund's key)")
			}
			return a.withClient(wait, func(ctx context.Context, c *client.Client) error {
				st, err := c.ReturnGoods(ctx, args[0], key, sig)
				if err != nil {
					return err
				}
				a.emit(st, func(w io.Writer) { printRefund(w, args[0], key, st) })
				return nil
			})
		},
	}
	c.Flags().StringVar(&key, "key", "", "the refund's key (required)")
	c.Flags().StringVar(&note, "note", "", "kept in the run's history")
	c.Flags().StringArrayVar(&lines, "line", nil, "SKU=QTY that came back (repeat; none: every line refunded)")
	c.Flags().DurationVar(&wait, "wait", 30*time.Second, "wait this long for the run to take it")
	return c
}

// parseLines reads --line SKU=QTY flags.
func parseLines(flags []string) ([]commerce.LineItem, error) {
	var out []commerce.LineItem
	for _, l := range flags {
		sku, qty, ok := strings.Cut(l, "=")
		n, err := strconv.Atoi(qty)
		if !ok || err != nil || n < 1 {
			return nil, usagef("--line %q: want SKU=QTY", l)
		}
		out = append(out, commerce.LineItem{SKU: sku, Quantity: n})
	}
	return out, nil
}

// printRefund is the text form of a refund's status.
func printRefund(w io.Writer, id, key string, st draftorder.RefundStatus) {
	fmt.Fprintf(w, "%s refund %s: %s", id, key, st.State)
	if st.Amount != nil {
		fmt.Fprintf(w, " (%s)", st.Amount.Display())
	}
	fmt.Fprintln(w)
	if p := st.Approvals.Pending; p != nil {
		fmt.Fprintf(w, "  waits for %v to decide approval %s until %s\n", p.AllowedRoles, p.ApprovalID, p.ExpiresAt.UTC().Format(time.RFC3339))
		for _, f := range p.Facts {
			fmt.Fprintf(w, "    %s\n", f)
		}
	}
	if r := st.Result; r != nil {
		fmt.Fprintf(w, "  %s: %s", r.State, r.Message)
		if r.Refund != nil && r.Refund.RefundID != "" {
			fmt.Fprintf(w, " (Stripe refund %s)", r.Refund.RefundID)
		}
		fmt.Fprintln(w)
	}
	if r := st.Return; r != nil {
		fmt.Fprintf(w, "  return %s (until %s): %v\n", r.State, r.Until.UTC().Format(time.RFC3339), r.Lines)
		if r.LastRefusal != nil {
			fmt.Fprintf(w, "    last refused: %s\n", r.LastRefusal.Error())
		}
	}
}
