package draftorder

import (
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// complianceModes lists the transport mode of every compliance call.
func complianceModes(f *fixture) []string {
	var out []string
	for _, c := range f.CallsOf("CheckCompliance") {
		out = append(out, c.(flowtest.ToolIn[commerce.CheckComplianceArgs]).Args.TransportMode)
	}
	return out
}

// TestComplianceFollowsTheChosenMode: a power
// bank on the standard service, which ships by ground, is checked for
// ground and not blocked as if it flew.
func TestComplianceFollowsTheChosenMode(t *testing.T) {
	f := newFixture(t)
	f.blockAir = true
	f.modeOf = func(level string, _ time.Time) string {
		if level == "express" {
			return "air"
		}
		return "ground"
	}
	f.At(time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v, want the draft created (ground is allowed)", res)
	}
	if got := complianceModes(f); len(got) != 1 || got[0] != "ground" {
		t.Fatalf("compliance checked for %v, want [ground]", got)
	}
	// One quote step (origins, pricing, compliance, total), the write and
	// the hold's end (the stock released).
	if n, want := len(f.ToolCalls), 6; n != want || f.Steps != 1 {
		t.Fatalf("tool calls = %d in %d step(s), want %d in 1 (%v)", n, f.Steps, want, f.ToolCalls)
	}
}

// TestExpressStillBlocked: the same basket on express (air) is
// blocked, and the blocking decision is in the run's evidence.
func TestExpressStillBlocked(t *testing.T) {
	f := newFixture(t)
	f.blockAir = true
	f.in.ShippingService = "express"
	res := f.run()
	if res.State != StateComplianceBlocked || res.Code != toolkit.ComplianceBlocked {
		t.Fatalf("result = %+v", res)
	}
	if got := complianceModes(f); len(got) != 1 || got[0] != "air" {
		t.Fatalf("compliance checked for %v, want [air]", got)
	}
	if !hasEvidence(res.Evidence, "q1/compliance") {
		t.Fatalf("the blocking compliance answer is not in the evidence: %+v", res.Evidence)
	}
}

// TestRequoteWithAnotherModeChecksAgain: when the re-quoted option
// ships by another mode, compliance runs again for it, and a block then
// ends the order before anything is created.
func TestRequoteWithAnotherModeChecksAgain(t *testing.T) {
	f := newFixture(t)
	f.blockAir = true
	f.modeOf = func(_ string, now time.Time) string {
		if now.Before(flowtest.T0.Add(10 * time.Minute)) {
			return "ground"
		}
		return "air" // the carrier moved the service to air
	}
	f.At(20*time.Minute, f.confirmPublished) // the quote expired: re-quote
	res := f.run()
	if res.State != StateComplianceBlocked || f.Count("CreateDraftOrder") != 0 {
		t.Fatalf("result = %+v, creates %d", res, f.Count("CreateDraftOrder"))
	}
	if got := complianceModes(f); len(got) != 2 || got[0] != "ground" || got[1] != "air" {
		t.Fatalf("compliance checked for %v, want [ground air]", got)
	}
}

func hasEvidence(refs []workflows.EvidenceRef, step string) bool {
	for _, r := range refs {
		if r.Step == step && r.SnapshotID != "" {
			return true
		}
	}
	return false
}
