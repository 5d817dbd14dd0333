package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/stripetools"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// TestReconcileThroughTheCLI: exit 0 on a clean database, 1 with a
// violation (a success audit without its snapshot) and the stale pending
// audit closed, 2 for a threshold below its floor or no database.
func TestReconcileThroughTheCLI(t *testing.T) {
	s := stack(t)
	var rep evidence.ReconcileReport
	if r := jsonOut(t, &rep, "reconcile"); r.code != exitOK || rep.ViolationCount() != 0 {
		t.Fatalf("clean database: exit %d %+v: %s", r.code, rep, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	for i, row := range []struct {
		status string
		age    time.Duration
	}{{"pending", 3 * time.Hour}, {"success", time.Hour}} {
		finalized := "NULL"
		if row.status != "pending" {
			finalized = "now() - make_interval(secs => $3)"
		}
		if _, err := s.Pool.Exec(ctx, `INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash, actor_type,
			action, reason, status, payload_sha, workflow_id, run_id, activity_id, evidence_refs, created_at, finalized_at)
			VALUES ($1, true, 'checkout.create_draft_order', 'uh_x', 'user', 'allow', 'seeded', $2, '', 'wf-seed', 'r1', $4,
			'{}'::jsonb, now() - make_interval(secs => $3), `+finalized+`)`,
			"corr-00000000000000a"+string(rune('0'+i)), row.status, row.age.Seconds(), "1"); err != nil {
			t.Fatal(err)
		}
	}
	rep = evidence.ReconcileReport{}
	r := jsonOut(t, &rep, "reconcile", "--pending-after", "90m")
	if r.code != exitRefused || rep.MarkedFailed != 1 || rep.SuccessWithoutSnapshot != 1 || rep.PendingAfterSeconds != 5400 {
		t.Fatalf("violations: exit %d, report %+v, stderr %s", r.code, rep, r.stderr)
	}
	text := runCLI(t, "", "reconcile")
	if text.code != exitRefused || !strings.Contains(text.stdout, "1 VIOLATION(S)") {
		t.Fatalf("text report: exit %d\n%s", text.code, text.stdout)
	}
	runCLI(t, "", "reconcile", "--pending-after", "10s").oneLineErr(t, "threshold below the floor", exitCannot, "INVALID_ARGUMENT", "floor")
	t.Setenv("CARTWRIGHT_PG_DSN", "postgres://nobody:nothing@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	runCLI(t, "", "reconcile").oneLineErr(t, "unreachable database", exitCannot, "UPSTREAM_ERROR")
}

// TestOnboardingThroughTheCLI: start, status and the access-logged reveal
// of the relink URL, all through the client; a merchant id that is not one
// is refused without echoing it.
func TestOnboardingThroughTheCLI(t *testing.T) {
	s := stack(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	const merchant, account = "m_cli_link", "acct_1CwCliLink0001"
	testenv.AdminExec(t, s.Pool, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, country, business_type, onboarding_status)
		VALUES ($1, $2, 'CLI Test Shop', 'GB', 'company', 'in_progress')`, merchant, account)
	wfID, _ := onboardingflow.ID(merchant)
	s.TerminateLater(t, wfID)
	if r := runCLI(t, "", "onboarding", "start", "--merchant", merchant); r.code != exitOK || !strings.Contains(r.stdout, wfID) {
		t.Fatalf("start: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var st onboardingflow.Status
	deadline := time.Now().Add(testenv.Deadline(30 * time.Second))
	for st.Relink == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no relink URL: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
		jsonOut(t, &st, "onboarding", "status", "--merchant", merchant)
	}
	var link struct {
		URL string `json:"url"`
	}
	if r := jsonOut(t, &link, "onboarding", "link", "--merchant", merchant); r.code != exitOK || !strings.HasPrefix(link.URL, "http") ||
		stripetools.URLHash(link.URL) != st.Relink.URLSHA256 {
		t.Fatalf("link: exit %d %+v (hash %s): %s", r.code, link, st.Relink.URLSHA256, r.stderr)
	}
	var reads int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM evidence_access_log WHERE snapshot_id = $1`, st.Relink.SnapshotID).Scan(&reads); err != nil || reads != 1 {
		t.Fatalf("access log: %d reads (%v)", reads, err)
	}
	runCLI(t, "", "onboarding", "link", "--merchant", merchant, "--login").oneLineErr(t, "no login link", exitCannot, "NOT_FOUND")
	r := runCLI(t, "", "onboarding", "status", "--merchant", "jane@example.com")
	r.oneLineErr(t, "bad merchant id", exitCannot, "INVALID_ARGUMENT")
	if strings.Contains(r.stderr, "jane@example.com") {
		t.Fatalf("the error echoes the bad id: %s", r.stderr)
	}
}
