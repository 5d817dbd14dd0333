package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/body"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

func (a *app) draftOrderCmd() *cobra.Command {
	return group("draft-order", "Start, confirm, cancel, approve, reject a draft order, or read its status",
		`A draft order prices a basket (pricing, shipping, compliance, duties and taxes,
total), waits for support staff when compliance is uncertain, waits for the user
to confirm the exact total (its quote_hash), then creates the draft order once
per user and idempotency key. Its workflow id is
draft-order/{user_id}/{idempotency_key}. Once written, the draft holds its stock
and, with a merchant_id, is charged (order-status, pay, cancel-order).`,
		a.draftStartCmd(), a.draftConfirmCmd(), a.draftCancelCmd(),
		a.draftDecideCmd(true), a.draftDecideCmd(false), a.draftStatusCmd(),
		a.orderStatusCmd(), a.payCmd(), a.cancelOrderCmd(), a.refundCmd(), a.returnedCmd())
}

func (a *app) draftStartCmd() *cobra.Command {
	var (
		file, user, key string
		newKey          bool
		wait            time.Duration
	)
	c := &cobra.Command{
		Use:   "start -f ORDER.json",
		Short: "Start a draft order from a JSON order (or attach to the one with the same key)",
		Long: `Start a draft order from an order file (-f FILE, or -f - for stdin): the JSON of
draftorder.Input, e.g.

  {"request": {"user_id": "u_123", "idempotency_key": "order-2f9c1e77", "currency": "EUR"},
   "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 2}],
   "ship_to": {"name": "Erika Mustermann", "line1": "Invalidenstrasse 116",
               "city": "Berlin", "postal_code": "10115", "country": "DE"},
   "shipping_service": "standard", "incoterm": "DDP"}

The file is read strictly (unknown fields, duplicate keys and wrong types are
INVALID_ARGUMENT naming the field), then checked as the workflow would check it,
before anything starts. The same user and key always reach the same run: a
second start attaches to it (the output says "attached"). The start returns once
the total is published (or staff must decide, or the order ended) and prints how
to confirm it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if newKey && key != "" {
				return usagef("--key and --new-key exclude each other")
			}
			in, err := a.readOrder(file)
			if err != nil {
				return err
			}
			if user != "" {
				in.Request.UserID = user
			}
			switch {
			case newKey:
				in.Request.IdempotencyKey = freshKey("order")
			case key != "":
				in.Request.IdempotencyKey = key
			}
			if in.Request.IdempotencyKey == "" {
				return toolkit.Errorf(toolkit.InvalidArgument,
					"request.idempotency_key is required (in the file, or --key K, or --new-key for a fresh one)")
			}
			// The workflow's own checks, before connecting: a bad file is
			// reported the same with or without a server.
			if err := in.Validate(); err != nil {
				return err
			}
			return a.startAndShow(in, wait)
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "order JSON file, - for stdin (required)")
	c.Flags().StringVar(&user, "user", "", "user id (overrides request.user_id)")
	c.Flags().StringVar(&key, "key", "", "idempotency key (overrides request.idempotency_key)")
	c.Flags().BoolVar(&newKey, "new-key", false, "use a fresh idempotency key (a new draft order every time)")
	c.Flags().DurationVar(&wait, "wait", 30*time.Second, "wait this long for the total (0: print the ids only; the start still returns with the first answer)")
	_ = c.MarkFlagRequired("file")
	return c
}

// readOrder decodes the order file strictly.
func (a *app) readOrder(file string) (draftorder.Input, error) {
	body, err := a.readFile(file, "order file")
	if err != nil {
		return draftorder.Input{}, err
	}
	return client.DecodeDraftOrderInput(bytes.NewReader(body))
}

// readFile reads file, or standard input for "-", bounded by
// toolkit.MaxBodyBytes; what names the file in the error.
func (a *app) readFile(file, what string) ([]byte, error) {
	if file == "-" {
		return body.Read(a.stdin)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "%s: %v", what, err)
	}
	defer f.Close()
	return body.Read(f)
}

// startResult is start's (and sample's) --json output.
type startResult struct {
	client.Handle
	Status *draftorder.Status `json:"status,omitempty"`
	UILink string             `json:"ui_link"`
	// ConfirmCommand and TemporalCommand confirm the published total.
	ConfirmCommand  string `json:"confirm_command,omitempty"`
	TemporalCommand string `json:"temporal_command,omitempty"`
}

// startAndShow starts in and, with wait > 0, waits for the total and
// prints it with the commands that confirm it.
func (a *app) startAndShow(in draftorder.Input, wait time.Duration) error {
	return a.withClient(wait, func(ctx context.Context, c *client.Client) error {
		h, err := c.StartDraftOrder(ctx, in)
		if err != nil {
			return err
		}
		res := startResult{Handle: h.Handle, UILink: uiLink(a.uiBase(), c.Namespace(), h.WorkflowID, h.RunID)}
		if wait > 0 {
			// The start came back with the draft order's first answer
			// (the total, the approval wait, or the end).
			st := h.Status
			res.Status = &st
			if st.Confirmation != nil {
				res.ConfirmCommand, res.TemporalCommand = confirmCommands(selfName(), temporalCLI(), c.Address(), c.Namespace(),
					h.WorkflowID, st.Confirmation.QuoteHash)
			}
		}
		a.emit(res, func(w io.Writer) { printStarted(w, res) })
		if res.Status != nil && res.Status.Result != nil && !succeeded(*res.Status.Result) {
			return &exitError{code: exitEnded(*res.Status.Result)}
		}
		return nil
	})
}

func printStarted(w io.Writer, r startResult) {
	how := "started"
	if r.Attached {
		how = "attached to the existing run (same user and idempotency key)"
	}
	fmt.Fprintf(w, "draft order %s\n  workflow id  %s\n  run id       %s\n  web ui       %s\n", how, r.WorkflowID, r.RunID, r.UILink)
	if r.Status == nil {
		return
	}
	printStatus(w, r.WorkflowID, *r.Status)
	if r.ConfirmCommand != "" {
		fmt.Fprintf(w, "\nConfirm the total with either of:\n  %s\n  %s\n", r.ConfirmCommand, r.TemporalCommand)
	}
	if p := r.Status.Approvals.Pending; p != nil {
		fmt.Fprintf(w, "\nSupport staff decide, with their own CARTWRIGHT_STAFF_TOKEN (or signed in at the codec server, from the Web UI):\n"+
			"  %s draft-order approve %s --reason '…'\n  %s draft-order reject %s --reason '…'\n",
			selfName(), shellQuote(r.WorkflowID), selfName(), shellQuote(r.WorkflowID))
	}
}

// freshKey is a random idempotency key (a generated token, as the
// workflow requires).
func freshKey(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// uiBase is the Temporal Web UI the links point to: --ui-url, else the
// configured one (CARTWRIGHT_UI_URL, which the stack writes into its env).
func (a *app) uiBase() string {
	if a.uiURL != "" {
		return a.uiURL
	}
	cfg, err := config.Load()
	if err != nil {
		return defaultUIURL
	}
	return cfg.UIURL
}

// defaultUIURL is the dev server's UI (`make dev`).
const defaultUIURL = "http://localhost:8233"
