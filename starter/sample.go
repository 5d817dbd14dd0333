package main

import (
	"bytes"
	_ "embed"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/client"
)

// sampleOrder is a small basket to Berlin that needs no support-staff
// approval: it stops at the user's confirmation.
//
//go:embed sample_order.json
var sampleOrder []byte

func (a *app) sampleCmd() *cobra.Command {
	var wait time.Duration
	c := &cobra.Command{
		Use:   "sample",
		Short: "Start a sample draft order and print how to confirm it (make dev's last step)",
		Long: `Start a draft order from a bundled sample order (two T-shirts and a puzzle to
Berlin, user u_sample) with a fresh idempotency key, wait until it publishes
the total, and print the total, the run's Web UI link (--ui-url) and the exact
commands that confirm it: 'starter draft-order confirm …' and the Temporal CLI's
'temporal workflow signal … --name confirm'. Needs a worker polling the task
queue. --json prints the same as a JSON object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := client.DecodeDraftOrderInput(bytes.NewReader(sampleOrder))
			if err != nil {
				return err
			}
			in.Request.IdempotencyKey = freshKey("sample")
			in.Request.RequestID = "req-" + in.Request.IdempotencyKey
			return a.startAndShow(in, wait)
		},
	}
	c.Flags().DurationVar(&wait, "wait", time.Minute, "wait this long for the total")
	return c
}
