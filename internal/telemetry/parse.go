package telemetry

import (
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse reads the Prometheus text format as Prometheus does (expfmt), by
// family name. `starter stats` and the tests read /metrics with it.
func Parse(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// Sum adds up the samples of family name whose labels include every pair
// of match (nil: all): counter and gauge values, histogram sums.
func Sum(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	var total float64
	for _, m := range Select(fams, name, match) {
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += m.Histogram.GetSampleSum()
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		}
	}
	return total
}

// Count adds up the observation counts of histogram family name over the
// samples match selects.
func Count(fams map[string]*dto.MetricFamily, name string, match map[string]string) uint64 {
	var n uint64
	for _, m := range Select(fams, name, match) {
		if m.Histogram != nil {
			n += m.Histogram.GetSampleCount()
		}
	}
	return n
}

// Select is the samples of family name whose labels include match.
func Select(fams map[string]*dto.MetricFamily, name string, match map[string]string) []*dto.Metric {
	f, ok := fams[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, m := range f.GetMetric() {
		if hasLabels(m, match) {
			out = append(out, m)
		}
	}
	return out
}

func hasLabels(m *dto.Metric, match map[string]string) bool {
	for k, want := range match {
		got := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == k {
				got = l.GetValue()
			}
		}
		if got != want {
			return false
		}
	}
	return true
}
