package telemetry

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

var (
	// promqlNoise is what in a PromQL expression is not a metric name:
	// label matchers, range selectors, by/without groupings, strings.
	promqlNoise = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|\b(by|without|on|ignoring)\s*\([^)]*\)|"[^"]*"`)
	// promqlIdent is an identifier, with the '(' that makes it a function.
	promqlIdent = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(?:\s*\()?`)
)

// promqlWords are the aggregation operators and keywords that are not
// called like functions.
var promqlWords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "offset": true,
	"bool": true, "and": true, "or": true, "unless": true, "group_left": true, "group_right": true}

// DashboardMetrics lists the metric names a Grafana dashboard's queries
// (every "expr", panels in rows included) refer to, sorted and unique.
func DashboardMetrics(r io.Reader) ([]string, error) {
	var v any
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "expr" {
					for _, n := range exprMetrics(s) {
						seen[n] = true
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func exprMetrics(expr string) []string {
	var out []string
	for _, m := range promqlIdent.FindAllString(promqlNoise.ReplaceAllString(expr, " "), -1) {
		if strings.HasSuffix(m, "(") || promqlWords[m] {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Family is the family of fams a sample name belongs to: the name itself,
// or the histogram it is the _bucket, _sum or _count series of; "" if none.
func Family(fams map[string]*dto.MetricFamily, name string) string {
	if _, ok := fams[name]; ok {
		return name
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if f, exists := fams[base]; ok && exists && f.GetType() == dto.MetricType_HISTOGRAM {
			return base
		}
	}
	return ""
}
