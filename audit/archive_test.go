package audit_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

func TestArchivedWorkflowAuditsAfterDeletion(t *testing.T) {
	s := newStack(t)
	ctx := ctxT(t)
	id := "audit-archived-" + s.tq
	runID, _ := s.runFixture(t, id)
	waitVisible(t, s, `WorkflowId = "`+id+`" AND ExecutionStatus = "Completed"`, 1)

	res := s.archivePass(t)
	if res.Archived != 1 || res.Listed != 1 {
		t.Fatalf("first pass: %+v", res)
	}
	// A second pass overlaps the first and archives nothing twice.
	if res := s.archivePass(t); res.Archived != 0 || res.AlreadyArchived != 1 {
		t.Fatalf("second pass: %+v", res)
	}

	deleteWorkflow(t, s.c, id, runID)
	rep, err := audit.Audit(ctx, s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if err != nil || !rep.Clean || rep.Source != audit.SourceArchive || rep.RunID != runID || len(rep.Activities) != 3 {
		t.Fatalf("audit from archive: %v %+v", err, rep)
	}

	// Every read of the archive (it holds PII) is logged.
	var reads int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM history_archive_reads WHERE workflow_id = $1 AND reader = 'audit'`, id).
		Scan(&reads); err != nil || reads != 1 {
		t.Fatalf("archive reads logged: %d (%v), want 1", reads, err)
	}

	// An archived history edited afterwards is a finding, whether the
	// ciphertext or the hash was touched; nothing else is checked then.
	for _, edit := range []string{
		`UPDATE history_archive SET history_sealed = history_sealed || '\x00'::bytea WHERE workflow_id = $1`,
		`UPDATE history_archive SET history_sealed = $2, history_sha256 = 'sha256:' || repeat('0', 64) WHERE workflow_id = $1`,
	} {
		var sealed []byte
		_ = s.pool.QueryRow(ctx, `SELECT history_sealed FROM history_archive WHERE workflow_id = $1`, id).Scan(&sealed)
		args := []any{id}
		if strings.Contains(edit, "$2") {
			args = append(args, sealed[:len(sealed)-1]) // undo the first edit, break the hash
		}
		testenv.SuperExec(t, s.pool, edit, args...)
		rep, err = audit.Audit(ctx, s.deps, audit.ByID(id, runID))
		logReport(t, rep)
		if audit.ExitCode(rep, err) != audit.ExitFindings || len(findings(rep, audit.KindArchiveAltered)) != 1 || len(rep.Activities) != 0 {
			t.Fatalf("altered archive (%s): %v %+v", edit, err, rep.Findings)
		}
	}
}

// archivePass runs the ArchiveHistories workflow once on the test queue.
func (s *stack) archivePass(t *testing.T) history.SweepResult {
	t.Helper()
	ctx := ctxT(t)
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: s.tq}, maintenance.ArchiveHistoriesWorkflowName,
		maintenance.ArchiveHistoriesInput{TaskQueue: s.tq})
	if err != nil {
		t.Fatal(err)
	}
	var res history.SweepResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("archive pass: %+v", res)
	return res
}

// deleteWorkflow deletes a run as an operator would, with `temporal
// workflow delete` when the CLI is built (else the same API call), and
// waits until the server no longer has its history.
func deleteWorkflow(t *testing.T, c client.Client, id, runID string) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := os.Stat("../.bin/temporal"); err == nil {
		out, err := exec.CommandContext(ctx, "../.bin/temporal", "workflow", "delete", "--address", testenv.TemporalAddress(),
			"--namespace", "default", "--workflow-id", id, "--run-id", runID).CombinedOutput()
		if err != nil {
			t.Fatalf("temporal workflow delete: %v: %s", err, out)
		}
	} else if _, err := c.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: "default", WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: runID},
	}); err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		_, err := history.FetchHistory(ctx, c, id, runID)
		if history.IsNotFound(err) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s was not deleted in time", id)
}

// waitVisible waits until the visibility query lists at least n runs.
func waitVisible(t *testing.T, s *stack, query string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	for ctx.Err() == nil {
		resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err == nil && len(resp.GetExecutions()) >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("fewer than %d runs visible for %s", n, query)
}
