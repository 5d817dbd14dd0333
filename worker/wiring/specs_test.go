package wiring_test

import (
	"reflect"
	"sort"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

// TestToolSpecsAreTheRegistrys: the specs an auditor binds the workflows
// to (wiring.ToolSpecs, no clients built) are exactly those Build
// registers: a tool added to Build and not to ToolSpecs would make the
// auditor's replay fail with NOT_FOUND for it.
func TestToolSpecsAreTheRegistrys(t *testing.T) {
	s := wiringtest.Start(t)
	byName := func(list []toolkit.Spec) []toolkit.Spec {
		out := append([]toolkit.Spec(nil), list...)
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out
	}
	got, want := byName(wiring.ToolSpecs()), byName(s.Deps.Registry.Specs())
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		var g, w []string
		for _, x := range got {
			g = append(g, x.Name+"@"+x.Version)
		}
		for _, x := range want {
			w = append(w, x.Name+"@"+x.Version)
		}
		t.Fatalf("ToolSpecs %v, registry %v", g, w)
	}
}
