package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cartwright-dev/cartwright/"

// floors lists the folders from the ground up. A package may import its own
// floor's folders and those below, never one above: README "Architecture".
// workflows/ is a floor of its own inside: the shared names, the
// machinery, the approval wait, one room per flow, the registry above them.
var floors = [][]string{
	{"toolkit", "schemas", "knowledge", "docs"},
	{"internal", "support", "stripetools", "merchant"},
	{"evidence", "onboarding"},
	{"commerce"},
	{"activities"},
	{"workflows"},
	{"workflows/internal/flow"},
	{"workflows/approval"},
	{"workflows/internal/flowtest"},
	flows,
	{"workflows/registry", "workflows/draftordertest"},
	{"client", "audit", "webhook", "gateway"},
	{"worker", "starter"},
}

// flows are the rooms of the workflows, one per flow: none imports
// another, so a change to one flow never opens another's files.
var flows = []string{"workflows/draftorder", "workflows/onboardingflow", "workflows/toolcall", "workflows/maintenance"}

// temporalFacing may import the Temporal SDK and API: the workflows, their
// activities, and the processes and libraries that start, signal, read or
// replay them. Nothing below them does.
var temporalFacing = []string{"workflows", "activities", "client", "audit", "webhook", "gateway", "worker", "starter"}

type pkg struct {
	ImportPath string
	Imports    []string
}

// listPackages is `go list -json ./...` over the module (tests excluded:
// a test may reach across floors to build a stack).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"...")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errOut.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// top is a package's top folder ("commerce" for commerce/rules/tax).
func top(importPath string) string {
	rel := strings.TrimPrefix(importPath, module)
	t, _, _ := strings.Cut(rel, "/")
	return t
}

// folder is the folder of floors a package belongs to: the longest one
// that holds it ("commerce" for commerce/rules/tax, "workflows/draftorder"
// for workflows/draftorder).
func folder(importPath string) string {
	rel := strings.TrimPrefix(importPath, module)
	best := top(importPath)
	for _, f := range floors {
		for _, name := range f {
			if (rel == name || strings.HasPrefix(rel, name+"/")) && len(name) > len(best) {
				best = name
			}
		}
	}
	return best
}

func floorOf(t *testing.T, importPath string) int {
	for i, f := range floors {
		for _, name := range f {
			if folder(importPath) == name {
				return i
			}
		}
	}
	t.Errorf("%s: folder %q is on no floor: add it to floors (and to README \"Architecture\")", importPath, folder(importPath))
	return -1
}

// TestNoImportRunsUpstairs: every import of one of our packages goes to the
// same floor or below.
func TestNoImportRunsUpstairs(t *testing.T) {
	for _, p := range listPackages(t) {
		from := floorOf(t, p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if to := floorOf(t, imp); to > from {
				t.Errorf("%s (floor %d) imports %s (floor %d): an import up the house", p.ImportPath, from, imp, to)
			}
		}
	}
}

// TestOnlyTemporalFacingPackagesImportTheSDK keeps Temporal out of the tool
// contract, the tools, the evidence store and the infrastructure below.
func TestOnlyTemporalFacingPackagesImportTheSDK(t *testing.T) {
	allowed := map[string]bool{}
	for _, f := range temporalFacing {
		allowed[f] = true
	}
	for _, p := range listPackages(t) {
		if allowed[top(p.ImportPath)] {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "go.temporal.io/") {
				t.Errorf("%s imports %s: only %v may", p.ImportPath, imp, temporalFacing)
			}
		}
	}
}

// TestFlowsDoNotImportEachOther: the flows share a floor, and the floor
// rule would let them import each other; they may not.
func TestFlowsDoNotImportEachOther(t *testing.T) {
	isFlow := map[string]bool{}
	for _, f := range flows {
		isFlow[f] = true
	}
	for _, p := range listPackages(t) {
		from := folder(p.ImportPath)
		if !isFlow[from] {
			continue
		}
		for _, imp := range p.Imports {
			if to := folder(imp); strings.HasPrefix(imp, module) && isFlow[to] && to != from {
				t.Errorf("%s imports %s: a flow may not import another flow", p.ImportPath, imp)
			}
		}
	}
}
