package audit_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// TestCaptureHistories records the histories replayed by TestReplayHistories
// from real runs on the test stack. It only runs when asked:
//
//	CARTWRIGHT_CAPTURE_HISTORIES=1 go test -run TestCaptureHistories -count=1 ./audit/
//
// (with the test stack up: `scripts/stack.sh test up`, or inside `make
// test-integration`). One path alone: -run 'TestCaptureHistories/onboarding'.
// The files are the supported build's histories (docs/versioning.md):
// re-capture them all when a change ships as a new build id, and commit
// them; never re-capture to make a failing replay pass within a build — a
// failing replay means the change breaks the runs pinned to this build.
func TestCaptureHistories(t *testing.T) {
	if os.Getenv("CARTWRIGHT_CAPTURE_HISTORIES") != "1" {
		t.Skip("set CARTWRIGHT_CAPTURE_HISTORIES=1 to capture replay histories from the test stack")
	}
	s := newRealStack(t)
	// Quotes on this worker's clock expire 4 s after they are made.
	requoteTQ := s.startWorker(t, shortQuotes(4*time.Second))
	// A worker whose first in-process write attempt fails, so the regular
	// activity takes over; and one whose first quote attempt fails, so
	// its local activity is retried.
	handoverTQ := s.startWorkerWith(t, wiringtest.Options{Logger: s.logger,
		Worker: worker.Options{Interceptors: []interceptor.WorkerInterceptor{failFirstLocalWrite()}}})
	quoteRetriedTQ := s.startWorkerWith(t, wiringtest.Options{Logger: s.logger,
		Worker: worker.Options{Interceptors: []interceptor.WorkerInterceptor{failFirstQuote()}}})
	approve := driver{decision: "approve", approver: "bob.compliance", reason: "personal quantity, commercially packed"}
	for _, sc := range []struct {
		file    string
		tq      string
		in      draftorder.Input
		d       driver
		updates bool
		want    string
	}{
		{"draftorder_happy", s.tq, orderInput(uniqueKey("capture-happy"), tees, berlin, "EUR"), driver{}, false, draftorder.StateDraftCreated},
		{"draftorder_requote", requoteTQ, orderInput(uniqueKey("capture-requote"), tees, berlin, "EUR"), driver{confirmLate: true}, false, draftorder.StateDraftCreated},
		{"draftorder_approval", s.tq, orderInput(uniqueKey("capture-approval"), chocolate, sydney, "AUD"), approve, false, draftorder.StateDraftCreated},
		{"draftorder_rejection", s.tq, orderInput(uniqueKey("capture-rejection"), chocolate, sydney, "AUD"),
			driver{decision: "reject", approver: "bob.compliance", reason: "biosecurity import permit missing"}, false, draftorder.StateApprovalRejected},
		{"draftorder_blocked", s.tq, blockedOrder(uniqueKey("capture-blocked")), driver{}, false, draftorder.StateComplianceBlocked},
		{"draftorder_refused_approval", s.tq, orderInput(uniqueKey("capture-refused"), chocolate, sydney, "AUD"),
			driver{refuseFirst: "caol.admin", decision: "approve", approver: "carol.admin", reason: "personal quantity"}, false, draftorder.StateDraftCreated},
		// The captured file was recorded while a power bank by road still
		// went to review; a new capture has none (ADR SP188 allows it).
		{"draftorder_ground", s.tq, orderInput(uniqueKey("capture-ground"), powerBank, berlin, "EUR"),
			driver{}, false, draftorder.StateDraftCreated},
		{"draftorder_handover", handoverTQ, orderInput(uniqueKey("capture-handover"), tees, berlin, "EUR"), driver{}, false, draftorder.StateDraftCreated},
		{"draftorder_quote_retried", quoteRetriedTQ, orderInput(uniqueKey("capture-quote-retried"), tees, berlin, "EUR"), driver{}, false, draftorder.StateDraftCreated},
		// Driven by Workflow Updates (the Go client's path): Update-with-Start,
		// a refused and an accepted confirm, a staff decision by update.
		{"updates_draftorder_happy", s.tq, orderInput(uniqueKey("capture-upd-happy"), tees, berlin, "EUR"), driver{}, true, draftorder.StateDraftCreated},
		{"updates_draftorder_approval", s.tq, orderInput(uniqueKey("capture-upd-approval"), chocolate, sydney, "AUD"), approve, true, draftorder.StateDraftCreated},
	} {
		t.Run(sc.file, func(t *testing.T) {
			var runID string
			var res draftorder.Result
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
	// A written draft order's run, cancelled after the write: the
	// stock goes back (docs/stock.md).
	t.Run("settle_cancel", func(t *testing.T) {
		in := orderInput(uniqueKey("capture-settle"), tees, berlin, "EUR")
		_, res := s.runDraftOrder(t, s.tq, in, driver{})
		requireState(t, res, draftorder.StateDraftCreated)
		id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
		settleID := id
		h, err := s.c.UpdateWorkflow(ctxT(t), client.UpdateWorkflowOptions{WorkflowID: settleID, UpdateName: draftorder.UpdateCancelOrder,
			Args: []any{draftorder.CancelOrderInput{Reason: "capture"}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			t.Fatal(err)
		}
		var st draftorder.SettleStatus
		if err := h.Get(ctxT(t), &st); err != nil || st.Result == nil || st.Result.State != draftorder.StateCancelled {
			t.Fatalf("cancel: %+v %v", st, err)
		}
		run := s.c.GetWorkflow(ctxT(t), settleID, "")
		if err := run.Get(ctxT(t), nil); err != nil {
			t.Fatal(err)
		}
		s.capture(t, "settle_cancel", settleID, run.GetRunID())
	})
	// A refund of a written draft order that was never charged: the
	// refund run's first step (the tool's dry run) refuses it, the refund
	// update answers NOT_FOUND (no payment) and the run ends canceled
	// (docs/payments.md#refunds).
	t.Run("refund_refused", func(t *testing.T) {
		in := orderInput(uniqueKey("capture-refund"), tees, berlin, "EUR")
		_, res := s.runDraftOrder(t, s.tq, in, driver{})
		requireState(t, res, draftorder.StateDraftCreated)
		id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
		key := uniqueKey("capture-rf")
		rid := commerce.RefundWorkflowID(id, key)
		rin := draftorder.RefundInput{Request: in.Request, DraftOrderID: res.DraftOrder.DraftOrderID, ApproveAbove: 10000,
			Restock: draftorder.RestockOnReturn}
		rin.Request.IdempotencyKey = key
		uh, err := s.c.UpdateWithStartWorkflow(ctxT(t), client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: s.c.NewWithStartWorkflowOperation(workflows.OnceStartOptions(rid, s.tq, workflows.FlowOrderSettle, "PRICING", "capture"),
				draftorder.RefundWorkflowName, rin),
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: draftorder.UpdateRefund, Args: []any{draftorder.RefundAsk{Refund: &rin}},
				WaitForStage: client.WorkflowUpdateStageCompleted},
		})
		if err == nil {
			err = uh.Get(ctxT(t), nil)
		}
		if toolkit.AsError(err).Code != toolkit.NotFound {
			t.Fatalf("refund of an order never charged: %v", err)
		}
		run := s.c.GetWorkflow(ctxT(t), rid, "")
		if err := run.Get(ctxT(t), nil); err == nil {
			t.Fatal("the refused refund's run did not end canceled")
		}
		s.capture(t, "refund_refused", rid, run.GetRunID())
	})
	t.Run("onboarding", func(t *testing.T) {
		tq, fake := s.startOnboardingWorker(t)
		id, runID, res := s.runOnboarding(t, tq, fake)
		if res.State != onboardingflow.StateOnboarded {
			t.Fatalf("onboarding ended %+v", res)
		}
		s.capture(t, "onboarding", id, runID)
	})
	t.Run("toolcall", func(t *testing.T) {
		call := toolkit.ToolCall{Tool: commerce.ToolGetQuote,
			Request: toolkit.Request{RequestID: "req-" + uniqueKey("capture"), UserID: "u_capture", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_capture"}},
			Input:   json.RawMessage(`{"items":[{"sku":"TEE-ORG-M-WHT","quantity":1}],"currency":"EUR"}`)}
		opts, err := toolcall.StartOptions(s.tq, call)
		if err != nil {
			t.Fatal(err)
		}
		run, err := s.c.ExecuteWorkflow(ctxT(t), opts, toolcall.WorkflowName, toolcall.Input{Call: call})
		if err != nil {
			t.Fatal(err)
		}
		var res toolcall.Result
		if err := run.Get(ctxT(t), &res); err != nil || !res.Envelope.OK {
			t.Fatalf("tool call: %v %+v", err, res.Envelope)
		}
		s.capture(t, "toolcall", run.GetID(), run.GetRunID())
	})
	// A draft order whose currency the rates in use lack (THB: this stack
	// prices with the shipped table), started past the client's check:
	// its first step refuses it and the run ends canceled.
	t.Run("draftorder_currency_refused", func(t *testing.T) {
		in, err := orderInput(uniqueKey("capture-currency"), tees, berlin, "THB").Check()
		if err != nil {
			t.Fatal(err)
		}
		opts, err := draftorder.StartOptions(s.tq, in)
		if err != nil {
			t.Fatal(err)
		}
		run, err := s.c.ExecuteWorkflow(ctxT(t), opts, draftorder.WorkflowName, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Get(ctxT(t), nil); !temporal.IsCanceledError(err) {
			t.Fatalf("a currency the rates lack: %v, want the run canceled", err)
		}
		s.capture(t, "draftorder_currency_refused", run.GetID(), run.GetRunID())
	})
	// The scheduled maintenance passes, started once by hand.
	for _, sc := range []struct {
		file, workflow string
		in             any
	}{
		{"reconcile", maintenance.ReconcileWorkflowName, maintenance.ReconcileInput{TaskQueue: s.tq}},
		{"archive", maintenance.ArchiveHistoriesWorkflowName, maintenance.ArchiveHistoriesInput{TaskQueue: s.tq}},
		// This stack reads no feed, so the run ends REFUSED: the same
		// commands as a stored read (activity, search attributes, result).
		{"fxrates", maintenance.FetchFXRatesWorkflowName, maintenance.FetchFXRatesInput{}},
		// The Go client's ask of the rates in use before a start.
		{"fxrates_in_use", maintenance.RatesInUseWorkflowName, maintenance.RatesInUseInput{}},
	} {
		t.Run(sc.file, func(t *testing.T) {
			run, err := s.c.ExecuteWorkflow(ctxT(t), client.StartWorkflowOptions{ID: "capture-" + uniqueKey(sc.file), TaskQueue: s.tq}, sc.workflow, sc.in)
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Get(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			s.capture(t, sc.file, run.GetID(), run.GetRunID())
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
