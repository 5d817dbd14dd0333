package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/internal/telemetry"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func (a *app) statsCmd() *cobra.Command {
	var url string
	var watch time.Duration
	c := &cobra.Command{
		Use:   "stats [--url URL] [--watch D]",
		Short: "Print the key figures of a worker's /metrics: tool calls, errors, approvals waiting, Temporal",
		Long: `Print the key figures of a process's Prometheus /metrics, for someone without
Grafana: calls, errors and latency per tool, error codes, refusals, approvals
and confirmations waiting, draft orders by final state, evidence writes,
audits, webhooks, schedule-to-start and pollers. The figures count since the
process started.

--url defaults to http://$CARTWRIGHT_METRICS_ADDR/metrics (the worker's;
'. .data/env' sets it). --watch D reprints every D, like top, until
interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if url == "" {
				addr := os.Getenv("CARTWRIGHT_METRICS_ADDR")
				if addr == "" || addr == "off" {
					return toolkit.Errorf(toolkit.InvalidArgument, "no metrics endpoint: pass --url or set CARTWRIGHT_METRICS_ADDR")
				}
				url = "http://" + addr + "/metrics"
			}
			for {
				s, err := a.scrape(url)
				if err != nil {
					return err
				}
				if a.json {
					if err := writeJSON(a.stdout, s); err != nil {
						return err
					}
				} else {
					if watch > 0 {
						fmt.Fprint(a.stdout, "\033[H\033[2J") // clear the terminal, as top does
					}
					printStats(a.stdout, url, s)
				}
				if watch <= 0 {
					return nil
				}
				select {
				case <-a.ctx.Done():
					return nil
				case <-time.After(watch):
				}
			}
		},
	}
	c.Flags().StringVar(&url, "url", "", "the /metrics URL (default http://$CARTWRIGHT_METRICS_ADDR/metrics)")
	c.Flags().DurationVar(&watch, "watch", 0, "reprint every D until interrupted (0: once)")
	return c
}

// scrape reads and summarises one /metrics page.
func (a *app) scrape(url string) (telemetry.Summary, error) {
	ctx, cancel := context.WithTimeout(a.ctx, a.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return telemetry.Summary{}, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return telemetry.Summary{}, toolkit.Errorf(toolkit.UpstreamError, "scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return telemetry.Summary{}, toolkit.Errorf(toolkit.UpstreamError, "scrape %s: %s", url, resp.Status)
	}
	fams, err := telemetry.Parse(resp.Body)
	if err != nil {
		return telemetry.Summary{}, toolkit.Errorf(toolkit.UpstreamError, "%s is not Prometheus text: %v", url, err)
	}
	return telemetry.Summarize(fams), nil
}

func printStats(w io.Writer, url string, s telemetry.Summary) {
	fmt.Fprintf(w, "cartwright stats from %s\n\n", url)
	if s.ApprovalsWaiting != nil {
		fmt.Fprintf(w, "waiting now    approvals %.0f (oldest %s)   confirmations %.0f\n\n",
			*s.ApprovalsWaiting, seconds(s.OldestApprovalSeconds), deref(s.ConfirmationsWaiting))
	}
	if len(s.Tools) > 0 {
		fmt.Fprintf(w, "%-28s %8s %8s %10s %10s\n", "TOOL", "CALLS", "ERRORS", "P50", "P95")
		for _, t := range s.Tools {
			fmt.Fprintf(w, "%-28s %8.0f %8.0f %10s %10s\n", t.Tool, t.Calls, t.Errors, seconds(t.P50), seconds(t.P95))
		}
		fmt.Fprintln(w)
	}
	line(w, "errors by code", s.ErrorsByCode)
	line(w, "refused before running", s.Denied)
	line(w, "draft orders by final state", s.DraftOrdersByState)
	line(w, "evidence writes", s.EvidenceWrites)
	if len(s.EvidenceWrites) > 0 {
		fmt.Fprintf(w, "  evidence write p95 %s\n", seconds(s.EvidenceWriteP95))
	}
	line(w, "audits closed", s.Audits)
	line(w, "webhook deliveries", s.Webhooks)
	fmt.Fprintf(w, "reconcile violations: %.0f\n", s.ReconcileViolation)
	fmt.Fprintf(w, "temporal: schedule-to-start p95 workflow tasks %s, activities %s; sticky cache %.0f\n",
		seconds(s.WorkflowScheduleToStartP95), seconds(s.ActivityScheduleToStartP95), s.StickyCacheSize)
	line(w, "pollers", s.Pollers)
}

// line prints "what: k1 v1, k2 v2" sorted by key, or nothing when empty.
func line(w io.Writer, what string, m map[string]float64) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if strings.TrimSpace(name) == "" {
			name = "-"
		}
		parts = append(parts, fmt.Sprintf("%s %.0f", name, m[k]))
	}
	fmt.Fprintf(w, "%s: %s\n", what, strings.Join(parts, ", "))
}

// seconds renders a latency estimate; "-" without observations.
func seconds(v *float64) string {
	if v == nil {
		return "-"
	}
	return time.Duration(*v * float64(time.Second)).Round(100 * time.Microsecond).String()
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
