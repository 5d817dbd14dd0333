package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// clusterKnob is a knob of make cluster as its scripts read it: an
// environment variable CLUSTER_* with a default (${CLUSTER_X:-…} or
// ${CLUSTER_X-…}) or tested for being set (${CLUSTER_X:+…}).
var clusterKnob = regexp.MustCompile(`\$\{(CLUSTER_[A-Z_]+)(?::?[-+=])`)

// TestEveryClusterKnobIsInTheTable: every CLUSTER_* knob the scripts read
// has its row in operators.md's table of knobs
// (operators.md#a-temporal-cluster-make-cluster), so none is documented
// only in a script.
func TestEveryClusterKnobIsInTheTable(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "scripts", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	knobs := map[string]string{}
	for _, f := range scripts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range clusterKnob.FindAllStringSubmatch(string(b), -1) {
			knobs[m[1]] = filepath.Base(f)
		}
	}
	if len(knobs) < 5 {
		t.Fatalf("found only %d knobs in scripts/: is the pattern still right?", len(knobs))
	}
	doc, err := os.ReadFile("operators.md")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for k, f := range knobs {
		if !strings.Contains(string(doc), "| `"+k+"` |") {
			missing = append(missing, k+" (read by scripts/"+f+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("operators.md's table of make cluster's knobs has no row for %s", m)
	}
}
