package audit_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestWebUIWithCodecServer drives headless Chromium (scripts/ui, run by
// `make test-ui`) through the dev server's real Web UI, configured with
// --ui-codec-endpoint pointing at the worker's codec server: without a
// staff credential the codec server refuses and the UI shows encrypted
// payloads; signed in as staff it shows the draft order's decoded input;
// then the support-staff path (docs/approvals.md#sealed-decisions) —
// filter AwaitingApproval = true, open the workflow, see a decision sent
// as a raw SDK signal naming an active staff member refused in the
// current details, decide as the signed-in support member without typing
// an id and see it refused for the role, see the Signal form refused
// without sign-in, sign in as compliance and decide — moves the workflow
// on under the signed-in staff id with a verified seal, which this test
// checks from Go.
func TestWebUIWithCodecServer(t *testing.T) {
	if os.Getenv("CARTWRIGHT_UI_TEST") == "" {
		t.Skip("browser test: run `make test-ui` (needs chromium and scripts/ui/node_modules)")
	}
	codecPort := testenv.FreePort(t)
	endpoint := "http://localhost:" + strconv.Itoa(codecPort) + codecserver.PathPrefix
	dev := testenv.StartDevServer(t, testenv.DevServerOptions{UI: true, CodecEndpoint: endpoint})
	uiOrigin := "http://localhost:" + strconv.Itoa(dev.UIPort)
	s := newRealStackOn(t, clienttest.DialAt(t, dev.Address))
	tq, deps := s.ws.AddWorker(t, wiringtest.Options{Logger: s.logger, Configure: func(c *config.Config) { c.CodecCORSOrigins = []string{uiOrigin} }})

	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(codecPort))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: deps.Codec, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(6*time.Minute))
	defer cancel()
	to := commerce.Address{Name: plantedPII[0], Line1: plantedPII[1], City: "Sydney", Region: "NSW", PostalCode: "2000", Country: "AU"}
	// A finished, rejected order for the list's outcome column.
	rejected := orderInput(uniqueKey("webui-rejected"), chocolate, sydney, "AUD")
	if _, res := s.runDraftOrder(t, tq, rejected, driver{decision: "reject", approver: "bob.compliance", reason: "no import permit"}); res.State != draftorder.StateApprovalRejected {
		t.Fatalf("the order to reject ended %s", res.State)
	}
	rejectedID, _ := workflows.DraftOrderID(rejected.Request.UserID, rejected.Request.IdempotencyKey)
	in := orderInput(uniqueKey("webui"), chocolate, to, "AUD")
	// The approval window outlasts the confirmation window, so the history
	// tells its timer apart.
	in.ApprovalWindow = 20 * time.Minute
	opts, err := draftorder.StartOptions(tq, in)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.c.ExecuteWorkflow(ctx, opts, draftorder.WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.c.TerminateWorkflow(context.Background(), run.GetID(), "", "test over") })
	st := waitDraft(t, ctx, s, run.GetID(), func(st draftorder.Status) bool { return st.Approvals.Pending != nil })
	// What `temporal workflow signal` or any SDK client can send: an
	// active admin's name, typed, no seal. It decides nothing.
	forged := approval.Signal{ApprovalID: st.Approvals.Pending.ApprovalID, Decision: "approve", Approver: "carol.admin"}
	if err := s.c.SignalWorkflow(ctx, run.GetID(), "", approval.SignalApproval, forged); err != nil {
		t.Fatal(err)
	}
	waitDraft(t, ctx, s, run.GetID(), func(st draftorder.Status) bool {
		return st.Approvals.Pending != nil && st.Approvals.Pending.LastRefusal != nil
	})
	issuer := testenv.IssuerPool(t, s.pool.Config().ConnString())
	token, err := codecserver.IssueToken(ctx, issuer, "alice.support", "web ui test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	decider, err := codecserver.IssueToken(ctx, issuer, "bob.compliance", "web ui test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	// make test-ui refreshes the committed screenshots in docs/ui; make
	// test writes them under .data, leaving the checkout clean.
	shots, _ := filepath.Abs("../docs/ui")
	if dir := os.Getenv("CARTWRIGHT_UI_SHOTS"); dir != "" {
		shots = dir
	}
	failureShot := filepath.Join(os.TempDir(), "cartwright-ui-failure-"+strconv.FormatInt(time.Now().Unix(), 10)+".png")
	node := exec.CommandContext(ctx, "node", "codec-ui.mjs")
	node.Dir = "../scripts/ui"
	node.Env = append(os.Environ(),
		"UI_URL="+uiOrigin, "CODEC_URL="+endpoint, "STAFF_TOKEN="+token, "DECIDER_TOKEN="+decider,
		"WORKFLOW_ID="+run.GetID(), "RUN_ID="+run.GetRunID(), "APPROVAL_ID="+st.Approvals.Pending.ApprovalID,
		"PLANTED_NAME="+plantedPII[0], "SHOTS_DIR="+shots, "REJECTED_WORKFLOW_ID="+rejectedID, "FAILURE_SHOT="+failureShot)
	out, err := node.CombinedOutput()
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("browser test failed (%v); the log above names the condition that did not hold, screenshot %s", err, failureShot)
	}
	wctx, wcancel := context.WithTimeout(ctx, testenv.Deadline(30*time.Second))
	defer wcancel()
	after := waitDraft(t, wctx, s, run.GetID(), func(st draftorder.Status) bool {
		return st.Approvals.Pending == nil && len(st.Approvals.Decisions) == 1
	})
	// Nobody typed an id: the codec server sealed the signed-in staff id.
	d := after.Approvals.Decisions[0]
	if d.Approver != "bob.compliance" || d.Decision != "approve" || d.SealID == "" || d.Evidence == nil {
		t.Fatalf("decision from the UI: %+v", d)
	}
	if r := after.Rejected.Rejected; len(r) != 2 || r[0].Reason != workflows.RejectUnauthenticated || r[0].Approver != "carol.admin" ||
		r[1].Reason != workflows.RejectApproverForbidden || r[1].Approver != "alice.support" {
		t.Fatalf("refusals: %+v, want the raw signal's unauthenticated_decision, then alice.support's approver_not_allowed", r)
	}
	// The evidence of the decision holds the verified staff id and the seal,
	// which verifies again.
	snap, err := s.store.Get(ctx, d.Evidence.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	var rec support.ApprovalRecord
	if err := json.Unmarshal(snap.Output, &rec); err != nil || rec.Approver != "bob.compliance" || !rec.StaffVerified ||
		rec.Seal == nil || rec.Seal.SealID != d.SealID || s.ws.Deps.Seals.VerifyRecord(rec) != nil {
		t.Fatalf("evidence of the decision: %+v (%v)", rec, err)
	}
	checkQuietHistory(t, ctx, s, run.GetID(), run.GetRunID())
	var decodes int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM evidence_access_log WHERE kind = 'payload_decode' AND reader = 'alice.support'`).Scan(&decodes); err != nil || decodes == 0 {
		t.Fatalf("UI decodes logged: %d, %v", decodes, err)
	}
	t.Logf("workflow moved on to %s after the UI's approval; %d UI decode requests logged", after.State, decodes)
}

// checkQuietHistory: each refused decision (the raw signal's, then the
// support member's) is one failed activity, never retried, red in the Web
// UI (docs/approvals.md#what-staff-see), and none started a second
// approval-window timer (the only timer longer than the confirmation
// window).
func checkQuietHistory(t *testing.T, ctx context.Context, s *realStack, id, runID string) {
	t.Helper()
	h, err := history.FetchHistory(ctx, s.c, id, runID)
	if err != nil {
		t.Fatal(err)
	}
	windows, failed := 0, []string(nil)
	for _, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			if e.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration() > 15*time.Minute {
				windows++
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if a := e.GetActivityTaskStartedEventAttributes().GetAttempt(); a != 1 {
				t.Errorf("event %d: attempt %d: an activity was retried", e.GetEventId(), a)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			if app := e.GetActivityTaskFailedEventAttributes().GetFailure().GetApplicationFailureInfo(); app.GetNonRetryable() {
				failed = append(failed, app.GetType())
			}
		}
	}
	if want := []string{"UNAUTHORIZED", "FORBIDDEN"}; windows != 1 || !slices.Equal(failed, want) {
		t.Fatalf("history: %d approval-window timers (want 1), refused decisions failed with %v (want %v)", windows, failed, want)
	}
}

func waitDraft(t *testing.T, ctx context.Context, s *realStack, id string, ok func(draftorder.Status) bool) draftorder.Status {
	t.Helper()
	for ctx.Err() == nil {
		var st draftorder.Status
		if v, err := s.c.QueryWorkflow(ctx, id, "", workflows.QueryStatus); err == nil && v.Get(&st) == nil && ok(st) {
			return st
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("draft order %s: timed out", id)
	return draftorder.Status{}
}
