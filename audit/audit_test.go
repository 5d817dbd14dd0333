package audit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

func logReport(t *testing.T, r audit.Report) {
	t.Helper()
	var b strings.Builder
	_ = r.WriteText(&b)
	t.Log("\n" + b.String())
}

func findings(r audit.Report, kind string) []audit.Finding {
	var out []audit.Finding
	for _, f := range r.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

func TestCompletedWorkflowAuditsClean(t *testing.T) {
	s := newStack(t)
	id := "audit-clean-" + s.tq
	runID, ids := s.runFixture(t, id)
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if err != nil || audit.ExitCode(rep, err) != audit.ExitClean {
		t.Fatalf("audit: %v, exit %d, findings %v", err, audit.ExitCode(rep, err), rep.Findings)
	}
	if rep.RunID != runID || rep.Source != audit.SourceServer || !rep.Replay.OK || !rep.Chain.OK || rep.Chain.Rows != 4 {
		t.Fatalf("report: %+v", rep)
	}
	if len(rep.Activities) != 3 || rep.Activities[2].SnapshotID != ids[2] || rep.Activities[2].Attempt != 2 {
		t.Fatalf("activities: %+v (ids %v)", rep.Activities, ids)
	}
	// The first attempt of activity 3 answered and failed: its snapshot is
	// a note, not a finding.
	if len(rep.Notes) != 1 || rep.Notes[0].Kind != audit.NoteSupersededAttempt || rep.Notes[0].ActivityID != rep.Activities[2].ActivityID {
		t.Fatalf("notes: %+v", rep.Notes)
	}
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"clean":true`) {
		t.Fatalf("json: %s %v", b, err)
	}
}

func TestEditedSnapshotIsNamed(t *testing.T) {
	s := newStack(t)
	id := "audit-edited-" + s.tq
	_, ids := s.runFixture(t, id)
	testenv.SuperExec(t, s.pool, `UPDATE evidence_snapshots SET output = '{"step": 2, "note": "forged"}' WHERE snapshot_id = $1`, ids[1])
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitFindings {
		t.Fatalf("exit %d (%v), want 1", audit.ExitCode(rep, err), err)
	}
	want := rep.Activities[1].ActivityID
	for _, kind := range []string{audit.KindHashMismatch, audit.KindChainBroken} {
		fs := findings(rep, kind)
		if len(fs) == 0 || fs[0].ActivityID != want || fs[0].SnapshotID != ids[1] {
			t.Fatalf("%s findings %+v, want activity %s / %s", kind, fs, want, ids[1])
		}
	}
	if rep.Activities[1].OK || !rep.Activities[0].OK {
		t.Fatalf("activity checks: %+v", rep.Activities)
	}
}

func TestMissingAndExtraSnapshots(t *testing.T) {
	s := newStack(t)
	id := "audit-missing-" + s.tq
	runID, ids := s.runFixture(t, id)
	testenv.SuperExec(t, s.pool, `DELETE FROM evidence_snapshots WHERE snapshot_id = $1`, ids[0])
	// A snapshot of this run for an activity the history never scheduled.
	testenv.SuperExec(t, s.pool, `INSERT INTO evidence_snapshots SELECT
		'ev_01J00000000000000000000000', 'forged-'||dedupe_key, chain_key, 99, tool, tool_version, build, workflow_id,
		run_id, '999', activity_type, 1, request_id, correlation_id, user_id_hash, input_digest, output, output_hash,
		raw_ciphertext, raw_nonce, raw_key_id, ruleset_version, ttl_seconds, status, created_at, content_hash,
		prev_chain_hash, chain_hash, recorded_at FROM evidence_snapshots WHERE snapshot_id = $1`, ids[1])
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, runID))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitFindings {
		t.Fatalf("exit %d (%v)", audit.ExitCode(rep, err), err)
	}
	if fs := findings(rep, audit.KindMissingSnapshot); len(fs) != 1 || fs[0].ActivityID != rep.Activities[0].ActivityID {
		t.Fatalf("missing: %+v", fs)
	}
	if fs := findings(rep, audit.KindExtraSnapshot); len(fs) != 1 || fs[0].ActivityID != "999" {
		t.Fatalf("extra: %+v", fs)
	}
	if len(findings(rep, audit.KindChainBroken)) == 0 {
		t.Fatal("the chain with a deleted and a forged row verified")
	}
}

func TestNonDeterministicChangeIsReported(t *testing.T) {
	s := newStack(t)
	id := "audit-nondet-" + s.tq
	s.runFixture(t, id)
	d := s.deps
	d.Workflows = map[string]any{fixtureName: auditFixtureChanged}
	rep, err := audit.Audit(ctxT(t), d, audit.ByID(id, ""))
	logReport(t, rep)
	fs := findings(rep, audit.KindNondeterminism)
	if audit.ExitCode(rep, err) != audit.ExitFindings || rep.Replay.OK || len(fs) != 1 {
		t.Fatalf("exit %d (%v), findings %+v", audit.ExitCode(rep, err), err, rep.Findings)
	}
	// The evidence is still checked, and is fine.
	if len(rep.Activities) != 3 || len(findings(rep, audit.KindHashMismatch)) != 0 {
		t.Fatalf("evidence part: %+v", rep)
	}
}

func TestHistoryFileAudits(t *testing.T) {
	s := newStack(t)
	id := "audit-file-" + s.tq
	runID, _ := s.runFixture(t, id)
	h, err := history.FetchHistory(ctxT(t), s.c, id, runID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := history.EncodeHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("../.bin/temporal"); err == nil {
		// What an auditor is handed: the CLI's own export.
		b, err = exec.Command("../.bin/temporal", "workflow", "show", "--address", testenv.TemporalAddress(),
			"--namespace", "default", "--workflow-id", id, "--output", "json").Output()
		if err != nil {
			t.Fatalf("temporal workflow show: %v", err)
		}
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h2, err := audit.ReadHistoryFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := s.deps
	d.Temporal = nil // offline: the file and the evidence store only
	rep, err := audit.Audit(ctxT(t), d, audit.FromHistory(h2))
	logReport(t, rep)
	if err != nil || !rep.Clean || rep.WorkflowID != id || rep.RunID != runID || rep.Source != audit.SourceGiven {
		t.Fatalf("file audit: %v %+v", err, rep)
	}
}

func TestUnknownWorkflowCannotRun(t *testing.T) {
	s := newStack(t)
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID("no-such-workflow-"+s.tq, ""))
	if !errors.Is(err, audit.ErrNotFound) || audit.ExitCode(rep, err) != audit.ExitCannotRun {
		t.Fatalf("unknown workflow: %v, exit %d", err, audit.ExitCode(rep, err))
	}
}

func TestAuditMany(t *testing.T) {
	s := newStack(t)
	for i := 0; i < 2; i++ {
		s.runFixture(t, fmt.Sprintf("audit-many-%d-%s", i, s.tq))
	}
	waitVisible(t, s, fmt.Sprintf(`TaskQueue = %q AND ExecutionStatus = "Completed"`, s.tq), 2)
	m, err := audit.AuditMany(ctxT(t), s.deps, fmt.Sprintf(`TaskQueue = %q`, s.tq))
	if err != nil || m.Audited != 2 || m.Clean != 2 || m.ExitCode() != audit.ExitClean {
		t.Fatalf("many: %v %+v", err, m)
	}
}
