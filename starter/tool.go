package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func (a *app) toolCmd() *cobra.Command {
	return group("tool", "List the tools and call one durably",
		`Every tool (pricing, shipping, tax, compliance, checkout, onboarding, knowledge)
runs as an activity through one pipeline: preflight (registered, input valid
against its schema, actor allowed, consent), execution under its timeout, output
validation, sanitising, an evidence snapshot, and the response envelope.`,
		a.toolListCmd(), a.toolCallCmd())
}

func (a *app) toolListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the tools a worker serves, with their annotations, TTL and timeout",
		Long: `List the ToolSpecs of the worker's registry (the worker is the source of truth):
name, version, annotations, TTL, timeout and description. With --json, the full
specs. Needs a worker polling CARTWRIGHT_TASK_QUEUE.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(0, func(ctx context.Context, c *client.Client) error {
				specs, err := c.ListTools(ctx, time.Now().Add(a.timeout))
				if err != nil {
					return err
				}
				a.emit(specs, func(w io.Writer) { printSpecs(w, specs) })
				return nil
			})
		},
	}
}

func (a *app) toolCallCmd() *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:   "call -f FILE|-",
		Short: "Call one tool through the tool call workflow and print its response envelope",
		Long: `Call one tool durably: the call runs as the tool call workflow, whose id is
tool-call/{user_id}/{idempotency_key, else request_id}, so the same call twice
gives the same run and the same answer (a write tool is never called twice).
The file is a JSON tool call, decoded strictly (no unknown fields, no duplicate
keys):

  {"tool": "pricing.get_realtime_quote",
   "request": {"request_id": "req-2026-0001", "actor": {"type": "agent", "id": "shop-agent"},
               "user_id": "u_123", "currency": "EUR"},
   "input": {"currency": "EUR", "items": [{"sku": "TSHIRT-ORG-M-BLK", "quantity": 2}]}}

Prints the envelope (status, data, warnings, ttl, evidence snapshot, meta).
Exit: 0 the tool answered, 1 it refused (e.g. OUT_OF_STOCK, ADDRESS_INVALID),
2 invalid call or could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			call, err := a.readToolCall(file)
			if err != nil {
				return err
			}
			return a.withClient(0, func(ctx context.Context, c *client.Client) error {
				env, h, err := c.CallTool(ctx, call, time.Now().Add(a.timeout))
				if err != nil && h.WorkflowID == "" {
					return err
				}
				out := struct {
					WorkflowID string           `json:"workflow_id"`
					RunID      string           `json:"run_id"`
					Attached   bool             `json:"attached"`
					Envelope   toolkit.Response `json:"envelope"`
				}{h.WorkflowID, h.RunID, h.Attached, env}
				a.emit(out, func(w io.Writer) {
					fmt.Fprintf(w, "workflow %s (run %s)%s\n", h.WorkflowID, h.RunID, map[bool]string{true: ", attached to the earlier call", false: ""}[h.Attached])
					_ = writeJSON(w, env)
				})
				// The envelope is printed; the exit code says how it ended
				// (1 refused, 2 could not run), its error line on stderr.
				if !env.OK && env.Error != nil {
					return &exitError{code: exitFor(env.Error.Code), msg: string(env.Error.Code) + ": " + env.Error.Message}
				}
				return nil
			})
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "tool call JSON file, or - for stdin")
	_ = c.MarkFlagRequired("file")
	return c
}

// readToolCall decodes the call file with toolkit.DecodeToolCall.
func (a *app) readToolCall(file string) (toolkit.ToolCall, error) {
	body, err := a.readFile(file, "tool call file")
	if err != nil {
		return toolkit.ToolCall{}, err
	}
	return toolkit.DecodeToolCall(body)
}

func printSpecs(w io.Writer, specs []toolkit.Spec) {
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	for _, s := range specs {
		fmt.Fprintf(w, "%s@%s  ttl=%s timeout=%s  %s\n  %s\n", s.Name, s.Version, s.TTL, s.Timeout, annotations(s.Annotations), s.Description)
	}
}

func annotations(a toolkit.Annotations) string {
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{a.ReadOnly, "read_only"}, {a.Idempotent, "idempotent"}, {a.Destructive, "destructive"}, {a.OpenWorld, "open_world"}, {a.SensitiveSink, "sensitive_sink"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return fmt.Sprint(out)
}
