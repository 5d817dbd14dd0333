package telemetry

import (
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// Summary is the handful of figures `starter stats` prints from a
// /metrics scrape, for someone without Grafana.
type Summary struct {
	Tools []ToolFigures `json:"tools"`
	// ErrorsByCode counts failed calls by closed-set code; Denied the
	// calls refused before running, by "tool code".
	ErrorsByCode map[string]float64 `json:"errors_by_code"`
	Denied       map[string]float64 `json:"denied"`
	// Waiting figures are nil when the process does not report them (only
	// the worker with the schedules role does).
	ApprovalsWaiting      *float64 `json:"approvals_waiting,omitempty"`
	OldestApprovalSeconds *float64 `json:"oldest_approval_seconds,omitempty"`
	ConfirmationsWaiting  *float64 `json:"confirmations_waiting,omitempty"`

	DraftOrdersByState map[string]float64 `json:"draft_orders_by_state"`
	EvidenceWrites     map[string]float64 `json:"evidence_writes"`
	EvidenceWriteP95   *float64           `json:"evidence_write_p95_seconds,omitempty"`
	Audits             map[string]float64 `json:"audits"`
	Webhooks           map[string]float64 `json:"webhooks"`
	ReconcileViolation float64            `json:"reconcile_violations"`

	WorkflowScheduleToStartP95 *float64           `json:"workflow_schedule_to_start_p95_seconds,omitempty"`
	ActivityScheduleToStartP95 *float64           `json:"activity_schedule_to_start_p95_seconds,omitempty"`
	Pollers                    map[string]float64 `json:"pollers"`
	StickyCacheSize            float64            `json:"sticky_cache_size"`
}

// ToolFigures are one tool's calls since the process started.
type ToolFigures struct {
	Tool   string  `json:"tool"`
	Calls  float64 `json:"calls"`
	Errors float64 `json:"errors"`
	// P50 and P95 are the whole call's latency in seconds (bucket
	// estimates, as histogram_quantile computes them); nil without calls.
	P50 *float64 `json:"p50_seconds,omitempty"`
	P95 *float64 `json:"p95_seconds,omitempty"`
}

// Summarize computes the Summary of a scrape.
func Summarize(fams map[string]*dto.MetricFamily) Summary {
	s := Summary{
		ErrorsByCode: by(fams, "tool_errors_total", "code"), Denied: by(fams, "tool_denied_total", "tool", "code"),
		DraftOrdersByState:         by(fams, "draft_orders_finished_total", "state"),
		EvidenceWrites:             by(fams, "evidence_writes_total", "outcome"),
		EvidenceWriteP95:           known(Quantile(0.95, fams, "evidence_write_seconds", nil)),
		Audits:                     by(fams, "audit_results_total", "outcome"),
		Webhooks:                   by(fams, "webhook_events_total", "outcome"),
		ReconcileViolation:         Sum(fams, "reconcile_violations_total", nil),
		WorkflowScheduleToStartP95: known(Quantile(0.95, fams, "temporal_workflow_task_schedule_to_start_latency_seconds", nil)),
		ActivityScheduleToStartP95: known(Quantile(0.95, fams, "temporal_activity_schedule_to_start_latency_seconds", nil)),
		Pollers:                    by(fams, "temporal_num_pollers", "poller_type"),
		StickyCacheSize:            Sum(fams, "temporal_sticky_cache_size", nil),
	}
	gauge := func(name string) *float64 {
		if _, ok := fams[name]; !ok {
			return nil
		}
		v := Sum(fams, name, nil)
		return &v
	}
	s.ApprovalsWaiting = gauge("approvals_waiting")
	s.OldestApprovalSeconds = gauge("approvals_waiting_oldest_age_seconds")
	s.ConfirmationsWaiting = gauge("confirmations_waiting")
	for tool, calls := range by(fams, "tool_invocations_total", "tool") {
		total := map[string]string{"tool": tool, "phase": "total"}
		s.Tools = append(s.Tools, ToolFigures{
			Tool: tool, Calls: calls, Errors: calls - Sum(fams, "tool_invocations_total", map[string]string{"tool": tool, "code": ""}),
			P50: known(Quantile(0.5, fams, "tool_latency_seconds", total)), P95: known(Quantile(0.95, fams, "tool_latency_seconds", total)),
		})
	}
	sort.Slice(s.Tools, func(i, j int) bool {
		return s.Tools[i].Calls > s.Tools[j].Calls || (s.Tools[i].Calls == s.Tools[j].Calls && s.Tools[i].Tool < s.Tools[j].Tool)
	})
	return s
}

// known is v, or nil when it is NaN (no observations): JSON has no NaN.
func known(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// by sums family name by the values of labels (joined with a space).
func by(fams map[string]*dto.MetricFamily, name string, labels ...string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range Select(fams, name, nil) {
		key := ""
		for i, l := range labels {
			if i > 0 {
				key += " "
			}
			key += labelValue(m, l)
		}
		out[key] += Sum(map[string]*dto.MetricFamily{name: {Type: fams[name].Type, Metric: []*dto.Metric{m}}}, name, nil)
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Quantile estimates the q-quantile of histogram family name over the
// samples match selects, by linear interpolation within the bucket, as
// PromQL's histogram_quantile does; NaN without observations.
func Quantile(q float64, fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	cum := map[float64]uint64{}
	var total uint64
	for _, m := range Select(fams, name, match) {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		total += h.GetSampleCount()
		for _, b := range h.GetBucket() {
			cum[b.GetUpperBound()] += b.GetCumulativeCount()
		}
	}
	if total == 0 {
		return math.NaN()
	}
	bounds := make([]float64, 0, len(cum))
	for b := range cum {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	rank := q * float64(total)
	lower, below := 0.0, uint64(0)
	for _, b := range bounds {
		if float64(cum[b]) >= rank {
			if math.IsInf(b, 1) {
				return lower // above the last bound: its value is unknown
			}
			inBucket := cum[b] - below
			if inBucket == 0 {
				return b
			}
			return lower + (b-lower)*(rank-float64(below))/float64(inBucket)
		}
		lower, below = b, cum[b]
	}
	return lower
}
