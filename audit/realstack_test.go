package audit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// realStack runs the real workflows with the worker's own wiring (package
// worker/wiring) in-process, on a fresh database and a task queue of the
// test's own.
type realStack struct {
	c      client.Client
	pool   *pgxpool.Pool
	store  *evidence.Store
	logger *zap.Logger
	tq     string
	deps   audit.Deps
	ws     *wiringtest.Stack
}

func newRealStack(t *testing.T) *realStack {
	t.Helper()
	return newRealStackOn(t, nil)
}

// newRealStackOn is newRealStack on the dev server tc talks to (nil: the
// shared test server).
func newRealStackOn(t *testing.T, tc client.Client) *realStack {
	t.Helper()
	logger := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	ws := wiringtest.StartWith(t, wiringtest.Options{Logger: logger, Temporal: tc})
	s := &realStack{c: ws.Temporal, pool: ws.Pool, store: ws.Store, logger: logger, tq: ws.TaskQueue, ws: ws}
	s.deps = audit.Deps{Temporal: s.c, Evidence: s.store, Archive: ws.Deps.Archive, Logger: s.logger, Specs: ws.Deps.Registry.Specs(),
		DataConverter: clienttest.DataConverter(), Seals: ws.Deps.Seals}
	return s
}

// startWorker starts one more worker on a new task queue; clock, if set,
// is the commerce tools' clock (quotes expire by it).
func (s *realStack) startWorker(t *testing.T, clock func() time.Time) string {
	t.Helper()
	return s.startWorkerWith(t, wiringtest.Options{Logger: s.logger, Clock: clock})
}

// startWorkerWith starts a worker of the stack on a task queue of its own.
func (s *realStack) startWorkerWith(t *testing.T, opts wiringtest.Options) string {
	t.Helper()
	tq, _ := s.ws.AddWorker(t, opts)
	return tq
}

// driver plays the user and support staff of one draft order.
type driver struct {
	// decision, if set, answers the approval request (approve or reject).
	decision, approver, reason string
	// confirmLate confirms the first total only after its quote expired,
	// which makes the workflow re-quote.
	confirmLate bool
	// refuseFirst, if set, is an approver not on the roster who decides
	// first; the decision follows once the workflow refused it.
	refuseFirst string
}

// orderInput is a draft order of items to a country, keyed by key.
func orderInput(key string, items []commerce.LineItem, to commerce.Address, currency string) draftorder.Input {
	return draftorder.Input{
		Request: toolkit.Request{RequestID: "req-" + key, UserID: "u_capture", IdempotencyKey: key,
			Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_capture"}, Currency: currency},
		ConfirmWindow: 10 * time.Minute, ApprovalWindow: 10 * time.Minute,
		Order: commerce.Order{Items: items, ShipTo: to, Currency: currency},
	}
}

var (
	berlin = commerce.Address{Name: "Erika Mustermann", Line1: "Unter den Linden 1", City: "Berlin", PostalCode: "10117", Country: "DE"}
	sydney = commerce.Address{Name: "Jane Citizen", Line1: "1 Macquarie Street", City: "Sydney", Region: "NSW", PostalCode: "2000", Country: "AU"}
	tees   = []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}
	// Food to Australia is uncertain (biosecurity): support staff decide.
	chocolate = []commerce.LineItem{{SKU: "CHO-DARK70-100", Quantity: 3}}
)

func uniqueKey(name string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return name + "-" + hex.EncodeToString(b)
}

// runDraftOrder starts a draft order on tq, drives it to its end and
// returns its run id and result.
func (s *realStack) runDraftOrder(t *testing.T, tq string, in draftorder.Input, d driver) (string, draftorder.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	opts, err := draftorder.StartOptions(tq, in)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.c.ExecuteWorkflow(ctx, opts, draftorder.WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var res draftorder.Result
	go func() {
		var err error
		res, err = drafttest.Result(ctx, s.c, run.GetID())
		done <- err
	}()
	confirmed, decided, refused := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("draft order %s: %v", run.GetID(), err)
			}
			return run.GetRunID(), res
		case <-time.After(150 * time.Millisecond):
		}
		var st draftorder.Status
		v, err := s.c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.QueryStatus)
		if err != nil || v.Get(&st) != nil {
			continue // not started yet, or closing
		}
		if p := st.Approvals.Pending; p != nil && d.refuseFirst != "" && !refused[p.ApprovalID] {
			refused[p.ApprovalID] = true
			s.signal(t, ctx, run, approval.SignalApproval, sealedBy(t, d.refuseFirst, p.ApprovalID, d.decision, d.reason))
			continue
		}
		if p := st.Approvals.Pending; p != nil && d.decision != "" && !decided[p.ApprovalID] && (d.refuseFirst == "" || p.LastRefusal != nil) {
			decided[p.ApprovalID] = true
			s.signal(t, ctx, run, approval.SignalApproval, sealedBy(t, d.approver, p.ApprovalID, d.decision, d.reason))
		}
		c := st.Confirmation
		if c == nil || confirmed[c.QuoteHash] || (st.State != draftorder.StateNeedsConfirm && st.State != draftorder.StatePriceChanged) {
			continue
		}
		if d.confirmLate && len(confirmed) == 0 && time.Now().Before(c.QuoteExpiresAt.Add(500*time.Millisecond)) {
			continue
		}
		confirmed[c.QuoteHash] = true
		s.signal(t, ctx, run, draftorder.SignalConfirm, draftorder.ConfirmSignal{QuoteHash: c.QuoteHash})
	}
}

// sealedBy is staff's decision as the codec server seals it for them after
// they sign in (docs/approvals.md#sealed-decisions).
func sealedBy(t *testing.T, staff, approvalID, decision, reason string) approval.Signal {
	t.Helper()
	return approval.SignalOf(sealtest.Seal(t, staff, support.Decision{ApprovalID: approvalID, Decision: decision, Reason: reason}))
}

func (s *realStack) signal(t *testing.T, ctx context.Context, run client.WorkflowRun, name string, arg any) {
	t.Helper()
	if err := s.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), name, arg); err != nil {
		t.Fatalf("signal %s: %v", name, err)
	}
}

// shortQuotes is a commerce clock under which every quote expires a few
// seconds after it was made, so a re-quote happens within a test.
func shortQuotes(life time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(life - commerce.QuoteTTL) }
}

func requireState(t *testing.T, res draftorder.Result, want string) {
	t.Helper()
	if res.State != want {
		t.Fatalf("draft order ended %s (%s %s), want %s", res.State, res.Code, res.Message, want)
	}
}
