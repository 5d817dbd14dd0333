package audit_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
)

// TestCaptureHistories records the histories replayed by TestReplayHistories
// from real runs on the dev server. It only runs when asked:
//
//	CARTWRIGHT_CAPTURE_HISTORIES=1 go test -run TestCaptureHistories -count=1 ./audit/
//
// (with the test stack up: `scripts/stack.sh test up`, or inside `make
// test-integration`). One path alone: -run 'TestCaptureHistories/onboarding'. Re-capture after a deliberate, versioned change of a
// workflow, and commit the files; never re-capture to make a failing replay
// pass — a failing replay means running workflows would break.
//
// The files without a prefix were recorded before the tool activity
// (Tools.CallTool) and compliance-by-mode changes; they stay as they are,
// proving those runs still replay. The current code records the
// "local_" files (read-only tools as local activities); the
// "calltool_" draft orders were recorded on regular activities before it.
// Onboarding calls no local tool: its "calltool_" file stays current.
func TestCaptureHistories(t *testing.T) {
	if os.Getenv("CARTWRIGHT_CAPTURE_HISTORIES") != "1" {
		t.Skip("set CARTWRIGHT_CAPTURE_HISTORIES=1 to capture replay histories from the dev server")
	}
	s := newRealStack(t)
	// Quotes on this worker's clock expire 4 s after they are made.
	requoteTQ := s.startWorker(t, shortQuotes(4*time.Second))
	scenarios := []struct {
		file  string
		tq    string
		in    workflows.DraftOrderInput
		drive driver
		want  string
	}{
		{"local_draftorder_happy", s.tq, orderInput(uniqueKey("capture-happy"), tees, berlin, "EUR"), driver{}, workflows.StateDraftCreated},
		{"local_draftorder_requote", requoteTQ, orderInput(uniqueKey("capture-requote"), tees, berlin, "EUR"), driver{confirmLate: true}, workflows.StateDraftCreated},
		{"local_draftorder_approval", s.tq, orderInput(uniqueKey("capture-approval"), chocolate, sydney, "AUD"),
			driver{decision: "approve", approver: "bob.compliance", reason: "personal quantity, commercially packed"}, workflows.StateDraftCreated},
		{"local_draftorder_rejection", s.tq, orderInput(uniqueKey("capture-rejection"), chocolate, sydney, "AUD"),
			driver{decision: "reject", approver: "bob.compliance", reason: "biosecurity import permit missing"}, workflows.StateApprovalRejected},
		{"local_draftorder_blocked", s.tq, blockedOrder(uniqueKey("capture-blocked")), driver{}, workflows.StateComplianceBlocked},
		{"local_draftorder_refused_approval", s.tq, orderInput(uniqueKey("capture-refused"), chocolate, sydney, "AUD"),
			driver{refuseFirst: "caol.admin", decision: "approve", approver: "carol.admin", reason: "personal quantity"}, workflows.StateDraftCreated},
		{"local_draftorder_ground", s.tq, orderInput(uniqueKey("capture-ground"), powerBank, berlin, "EUR"),
			driver{decision: "approve", approver: "bob.compliance", reason: "DG by road, packed to ADR"}, workflows.StateDraftCreated},
	}
	for _, sc := range scenarios {
		t.Run(sc.file, func(t *testing.T) {
			runID, res := s.runDraftOrder(t, sc.tq, sc.in, sc.drive)
			requireState(t, res, sc.want)
			id, _ := workflows.DraftOrderID(sc.in.Request.UserID, sc.in.Request.IdempotencyKey)
			s.capture(t, sc.file, id, runID)
		})
	}
	// Driven by Workflow Updates (the Go client's path): Update-with-Start,
	// a refused and an accepted confirm, a staff decision by update. The
	// "updates_" files were recorded before the local activities; these
	// record the same paths on them.
	for _, sc := range []struct {
		file string
		in   workflows.DraftOrderInput
		d    driver
		want string
	}{
		{"local_updates_draftorder_happy", orderInput(uniqueKey("capture-upd-happy"), tees, berlin, "EUR"), driver{}, workflows.StateDraftCreated},
		{"local_updates_draftorder_approval", orderInput(uniqueKey("capture-upd-approval"), chocolate, sydney, "AUD"),
			driver{decision: "approve", approver: "bob.compliance", reason: "personal quantity, commercially packed"}, workflows.StateDraftCreated},
	} {
		t.Run(sc.file, func(t *testing.T) {
			runID, res := s.runByUpdates(t, s.tq, sc.in, sc.d)
			requireState(t, res, sc.want)
			id, _ := workflows.DraftOrderID(sc.in.Request.UserID, sc.in.Request.IdempotencyKey)
			s.capture(t, sc.file, id, runID)
		})
	}
	// Generation 1: no version markers, the write in the worker;
	// "handover" on a worker whose first in-process write attempt fails,
	// so the regular activity takes over.
	handoverTQ := s.startWorkerWith(t, wiringtest.Options{Logger: s.logger,
		Worker: worker.Options{Interceptors: []interceptor.WorkerInterceptor{failFirstLocalWrite()}}})
	s.captureGeneration(t, workflows.GenerationLocalWrite, []generationCase{
		{"gen1_draftorder_happy", s.tq, orderInput(uniqueKey("capture-g1-happy"), tees, berlin, "EUR"), driver{}, false, workflows.StateDraftCreated},
		{"gen1_draftorder_requote", requoteTQ, orderInput(uniqueKey("capture-g1-requote"), tees, berlin, "EUR"), driver{confirmLate: true}, false, workflows.StateDraftCreated},
		{"gen1_draftorder_approval", s.tq, orderInput(uniqueKey("capture-g1-approval"), chocolate, sydney, "AUD"),
			driver{decision: "approve", approver: "bob.compliance", reason: "personal quantity, commercially packed"}, false, workflows.StateDraftCreated},
		{"gen1_draftorder_blocked", s.tq, blockedOrder(uniqueKey("capture-g1-blocked")), driver{}, false, workflows.StateComplianceBlocked},
		{"gen1_updates_draftorder_happy", s.tq, orderInput(uniqueKey("capture-g1-upd-happy"), tees, berlin, "EUR"), driver{}, true, workflows.StateDraftCreated},
		{"gen1_draftorder_handover", handoverTQ, orderInput(uniqueKey("capture-g1-handover"), tees, berlin, "EUR"), driver{}, false, workflows.StateDraftCreated},
	})
	// Generation 2, as client.StartDraftOrder starts today: the first
	// quote round in one local activity; "round_fails" on a worker whose
	// first round fails, so the workflow makes the round's calls itself.
	roundFailsTQ := s.startWorkerWith(t, wiringtest.Options{Logger: s.logger,
		Worker: worker.Options{Interceptors: []interceptor.WorkerInterceptor{failFirstQuoteRound()}}})
	s.captureGeneration(t, workflows.GenerationQuoteRound, []generationCase{
		{"gen2_draftorder_happy", s.tq, orderInput(uniqueKey("capture-g2-happy"), tees, berlin, "EUR"), driver{}, false, workflows.StateDraftCreated},
		{"gen2_draftorder_requote", requoteTQ, orderInput(uniqueKey("capture-g2-requote"), tees, berlin, "EUR"), driver{confirmLate: true}, false, workflows.StateDraftCreated},
		{"gen2_draftorder_approval", s.tq, orderInput(uniqueKey("capture-g2-approval"), chocolate, sydney, "AUD"),
			driver{decision: "approve", approver: "bob.compliance", reason: "personal quantity, commercially packed"}, false, workflows.StateDraftCreated},
		{"gen2_draftorder_blocked", s.tq, blockedOrder(uniqueKey("capture-g2-blocked")), driver{}, false, workflows.StateComplianceBlocked},
		{"gen2_updates_draftorder_happy", s.tq, orderInput(uniqueKey("capture-g2-upd-happy"), tees, berlin, "EUR"), driver{}, true, workflows.StateDraftCreated},
		{"gen2_draftorder_round_fails", roundFailsTQ, orderInput(uniqueKey("capture-g2-round-fails"), tees, berlin, "EUR"), driver{}, false, workflows.StateDraftCreated},
	})
	t.Run("calltool_onboarding", func(t *testing.T) {
		tq, fake := s.startOnboardingWorker(t)
		id, runID, res := s.runOnboarding(t, tq, fake)
		if res.State != workflows.OnboardingComplete {
			t.Fatalf("onboarding ended %+v", res)
		}
		s.capture(t, "calltool_onboarding", id, runID)
	})
}

// generationCase is one captured run of a generation.
type generationCase struct {
	file    string
	tq      string
	in      workflows.DraftOrderInput
	d       driver
	updates bool
	want    string
}

// captureGeneration runs and captures each case on generation g.
func (s *realStack) captureGeneration(t *testing.T, g int, cases []generationCase) {
	for _, sc := range cases {
		t.Run(sc.file, func(t *testing.T) {
			sc.in.Generation = g
			var runID string
			var res workflows.DraftOrderResult
			if sc.updates {
				runID, res = s.runByUpdates(t, sc.tq, sc.in, sc.d)
			} else {
				runID, res = s.runDraftOrder(t, sc.tq, sc.in, sc.d)
			}
			requireState(t, res, sc.want)
			id, _ := workflows.DraftOrderID(sc.in.Request.UserID, sc.in.Request.IdempotencyKey)
			s.capture(t, sc.file, id, runID)
		})
	}
}

// capture writes the history of the run as testdata/histories/NAME.json.
// A capture must audit clean, or it records a broken run.
func (s *realStack) capture(t *testing.T, name, id, runID string) {
	t.Helper()
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, runID))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitClean {
		t.Fatalf("captured run does not audit clean: %v %v", err, rep.Findings)
	}
	h, err := history.FetchHistory(ctxT(t), s.c, id, runID)
	if err != nil {
		t.Fatal(err)
	}
	decodeHistory(t, h)
	writeHistory(t, name, h)
}

// decodeHistory decrypts the payloads of a history captured from a stack
// with the payload codec (the test key ring), so the file holds what every
// other capture holds: plain JSON payloads the replayer reads as they are,
// and a diff a reviewer can read.
func decodeHistory(t *testing.T, h *historypb.History) {
	t.Helper()
	c := codectest.Codec()
	err := proxy.VisitPayloads(ctxT(t), h, proxy.VisitPayloadsOptions{
		SkipSearchAttributes: true,
		Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
			return c.Decode(p)
		},
	})
	if err != nil {
		t.Fatalf("decode the captured history: %v", err)
	}
}

// writeHistory writes h as testdata/histories/NAME.json, indented so a
// re-capture shows as a reviewable diff.
func writeHistory(t *testing.T, name string, h *historypb.History) {
	t.Helper()
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(historiesDir, name+".json")
	if err := os.MkdirAll(historiesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d events)", path, len(h.GetEvents()))
}
