package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// withClient runs f with a connected client and a context bounded by
// --timeout plus wait.
func (a *app) withClient(wait time.Duration, f func(ctx context.Context, c *client.Client) error) error {
	ctx, cancel := a.ctxFor(wait)
	defer cancel()
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(ctx, c)
}

func (a *app) draftStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status WORKFLOW_ID",
		Short: "Print a draft order's state, total, pending confirmation or approval",
		Long: `Print the answer of the draft order's status query: its state, the total and its
quote_hash, the confirmation or support-staff approval it waits for, signals it
refused and why, and its result once it ended.`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(0, func(ctx context.Context, c *client.Client) error {
				st, err := c.Status(ctx, args[0])
				if err != nil && !errors.Is(err, client.ErrRunEnded) {
					return err
				}
				// A run that failed: its last state, then why (exit non-zero).
				a.emit(st, func(w io.Writer) {
					printStatus(w, args[0], st)
					// A written draft: its payment and stock hold too
					// (order-status prints them alone, and as JSON).
					if st.Result != nil && st.Result.State == draftorder.StateDraftCreated {
						if os, oerr := c.OrderStatus(ctx, args[0]); oerr == nil {
							printOrder(w, args[0], os)
						}
					}
				})
				return err
			})
		},
	}
}

func (a *app) draftConfirmCmd() *cobra.Command {
	var (
		hash string
		wait time.Duration
	)
	c := &cobra.Command{
		Use:   "confirm WORKFLOW_ID --quote-hash HASH",
		Short: "Confirm the published total (the user's agreement to pay it)",
		Long: `Confirm the quote_hash of the total the user agreed to (from 'draft-order status')
with the confirm_total update, which does what the confirm signal does and answers
this call: a hash other than the published one is refused (exit 1) with the
reason; if the quote expired the workflow re-quotes, and a changed price is
PRICE_CHANGED (exit 1) with the new total to confirm. It returns once the draft
order exists and prints the result, and whether this call created it or found
it created by an earlier confirmation of the same quote_hash (--json:
created_by_this_call, already_done).`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(wait, func(ctx context.Context, c *client.Client) error {
				ans, err := c.ConfirmResult(ctx, args[0], hash)
				if err != nil {
					return err
				}
				a.emitConfirmed(args[0], ans)
				return nil
			})
		},
	}
	c.Flags().StringVar(&hash, "quote-hash", "", "quote_hash of the total to confirm (required)")
	c.Flags().DurationVar(&wait, "wait", time.Minute, "wait this long for the result (the confirmation returns with it)")
	_ = c.MarkFlagRequired("quote-hash")
	return c
}

func (a *app) draftCancelCmd() *cobra.Command {
	var (
		reason string
		wait   time.Duration
	)
	c := &cobra.Command{
		Use:   "cancel WORKFLOW_ID",
		Short: "Cancel a draft order before it is created",
		Long: `Send the cancel signal. It is honoured at the workflow's next step (at once while
it waits for a person); once the draft order is being created it is refused
(exit 1).`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withClient(wait, func(ctx context.Context, c *client.Client) error {
				if err := c.Cancel(ctx, args[0], reason); err != nil {
					return err
				}
				return a.afterSignal(ctx, c, args[0], cancelSent, wait)
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why (kept in history, not shown in queries)")
	c.Flags().DurationVar(&wait, "wait", 30*time.Second, "wait this long for the run to end (0: do not wait)")
	return c
}

func (a *app) draftDecideCmd(approve bool) *cobra.Command {
	var (
		d         client.ApprovalDecision
		wait      time.Duration
		tokenFile string
		approver  string
	)
	use, short, verb := "approve", "Approve the pending support-staff approval", "approved"
	if !approve {
		use, short, verb = "reject", "Reject the pending support-staff approval (a reason is required)", "rejected"
	}
	c := &cobra.Command{
		Use:   use + " WORKFLOW_ID",
		Short: short,
		Long: short + `.

You decide as yourself: the codec server seals the decision for the owner of
the staff token (CARTWRIGHT_STAFF_TOKEN, or --token-file; get one with
'starter staff token --staff YOUR_ID'), at CARTWRIGHT_CODEC_URL (default: the
codec server of this configuration), and the sealed decision goes to the
workflow as the decide_approval update, which does what the approval signal
the Web UI's Signal button sends does and answers this call. The seal key
stays on the server (docs/approvals.md#sealed-decisions). The approval_id
defaults to the one pending now (see 'draft-order status'). A role the
approval does not allow, an inactive staff member, a stale or duplicate
approval_id is refused by the workflow (exit 1) and it keeps waiting.`,
		Args: exactArgs(1, "WORKFLOW_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if approver != "" {
				return usagef("--approver is gone: you decide as the owner of your staff token (CARTWRIGHT_STAFF_TOKEN or --token-file), never as a typed name")
			}
			sealer, err := a.sealClient(tokenFile)
			if err != nil {
				return err
			}
			d.Sealer = sealer
			return a.withClient(wait, func(ctx context.Context, c *client.Client) error {
				var err error
				if approve {
					err = c.Approve(ctx, args[0], d)
				} else {
					err = c.Reject(ctx, args[0], d)
				}
				if err != nil {
					return err
				}
				return a.afterDecision(ctx, c, args[0], verb, wait)
			})
		},
	}
	c.Flags().DurationVar(&wait, "wait", 10*time.Second, "wait this long for the next step (the total to confirm, or the end)")
	c.Flags().StringVar(&tokenFile, "token-file", "", "file holding your staff token (default: CARTWRIGHT_STAFF_TOKEN)")
	c.Flags().StringVar(&approver, "approver", "", "no longer accepted: your staff token says who you are")
	_ = c.Flags().MarkHidden("approver")
	c.Flags().StringVar(&d.ApprovalID, "approval-id", "", "approval to decide (default: the pending one)")
	reasonHelp := "why (kept in evidence)"
	if !approve {
		reasonHelp += " (required)"
	}
	c.Flags().StringVar(&d.Reason, "reason", "", reasonHelp)
	if !approve {
		_ = c.MarkFlagRequired("reason")
	}
	return c
}

// sealClient is the codec server's seal endpoint with this staff member's
// token: from tokenFile, else CARTWRIGHT_STAFF_TOKEN.
func (a *app) sealClient(tokenFile string) (codecserver.SealClient, error) {
	cfg, err := config.Load()
	if err != nil {
		return codecserver.SealClient{}, err
	}
	token := cfg.StaffToken
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return codecserver.SealClient{}, usagef("--token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	return codecserver.SealClient{Endpoint: cfg.CodecEndpoint(), Token: token, HTTP: &http.Client{Timeout: a.timeout}}, nil
}

const cancelSent = "cancel sent"

// afterSignal prints what happened after an accepted signal: the result
// when the run ends within wait, else its status. A run that ended
// without a draft is exit 1, except the cancel a cancel asked for.
func (a *app) afterSignal(ctx context.Context, c *client.Client, id, done string, wait time.Duration) error {
	if wait > 0 {
		res, err := c.WaitResult(ctx, id, time.Now().Add(wait))
		if err != nil {
			return err
		}
		a.emit(res, func(w io.Writer) {
			fmt.Fprintf(w, "%s\n", done)
			printResult(w, id, res)
		})
		if !succeeded(res) && !(res.State == draftorder.StateCancelled && done == cancelSent) {
			return &exitError{code: exitEnded(res)}
		}
		return nil
	}
	st, err := c.Status(ctx, id)
	if err != nil {
		return err
	}
	a.emit(st, func(w io.Writer) {
		fmt.Fprintf(w, "%s\n", done)
		printStatus(w, id, st)
		if st.Confirmation != nil {
			ours, raw := confirmCommands(selfName(), temporalCLI(), c.Address(), c.Namespace(), id, st.Confirmation.QuoteHash)
			fmt.Fprintf(w, "\nThe user confirms the total with either of:\n  %s\n  %s\n", ours, raw)
		}
	})
	return nil
}

// afterDecision shows where the draft order went after a staff decision:
// once it publishes the total (with the commands that confirm it) or ends,
// or as it is when wait runs out.
func (a *app) afterDecision(ctx context.Context, c *client.Client, id, done string, wait time.Duration) error {
	if wait > 0 {
		_, err := c.WaitForAction(ctx, id, time.Now().Add(wait))
		if err != nil && toolkit.CodeOf(err) != toolkit.Timeout {
			return err
		}
	}
	return a.afterSignal(ctx, c, id, done, 0)
}

// exactArgs is cobra.ExactArgs with a message naming what is missing.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("expects %s, got %d argument(s)", names, len(args))
		}
		return nil
	}
}
