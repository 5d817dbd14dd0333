package telemetry

import (
	"math"
	"strings"
	"testing"
)

// TestQuantileInterpolatesLikePromQL: ten observations, four in (0,1],
// six in (1,2]: the median is at rank 5, one sixth into the second bucket.
func TestQuantileInterpolatesLikePromQL(t *testing.T) {
	text := `# TYPE lat_seconds histogram
lat_seconds_bucket{tool="a",le="1"} 4
lat_seconds_bucket{tool="a",le="2"} 10
lat_seconds_bucket{tool="a",le="+Inf"} 10
lat_seconds_sum{tool="a"} 14
lat_seconds_count{tool="a"} 10
`
	fams, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Quantile(0.5, fams, "lat_seconds", nil), 1+1.0/6; math.Abs(got-want) > 1e-9 {
		t.Errorf("median = %v, want %v", got, want)
	}
	if got := Quantile(0.2, fams, "lat_seconds", nil); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("0.2-quantile = %v, want 0.5", got)
	}
	if got := Quantile(0.5, fams, "lat_seconds", map[string]string{"tool": "b"}); !math.IsNaN(got) {
		t.Errorf("quantile of nothing = %v, want NaN", got)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(scrape(t, exercised(t)))
	if len(s.Tools) != 1 || s.Tools[0].Tool != "quote_tax" || s.Tools[0].Calls != 1 || s.Tools[0].Errors != 1 || s.Tools[0].P95 == nil {
		t.Errorf("tools = %+v", s.Tools)
	}
	if s.ErrorsByCode["FORBIDDEN"] != 1 || s.Denied["quote_tax FORBIDDEN"] != 1 {
		t.Errorf("errors %v, denied %v", s.ErrorsByCode, s.Denied)
	}
	if s.ApprovalsWaiting == nil || *s.ApprovalsWaiting != 0 || s.Webhooks["refused"] != 1 || s.Audits["success"] != 1 {
		t.Errorf("summary = %+v", s)
	}
	if s.WorkflowScheduleToStartP95 != nil {
		t.Errorf("a schedule-to-start figure without a worker: %v", *s.WorkflowScheduleToStartP95)
	}
}
