package draftorder

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// answer is one update's outcome as its caller sees it.
type answer struct {
	rejected error // the validator refused: nothing was written
	err      error // accepted, then answered with an error
	value    any
	done     bool
}

// get copies the answer's value into out (the test environment hands the
// handler's own value over, not a payload).
func (a answer) get(out any) error {
	b, err := json.Marshal(a.value)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// updateSeq numbers the updates of a test run (their update ids).
var updateSeq atomic.Int64

// update sends an update now and records its answer in a.
func (f *fixture) update(name string, a *answer, arg any) {
	f.Env.UpdateWorkflow(name, fmt.Sprintf("u%d", updateSeq.Add(1)), &testsuite.TestUpdateCallback{
		OnAccept: func() {},
		OnReject: func(err error) { a.rejected, a.done = err, true },
		OnComplete: func(v any, err error) {
			a.err, a.done, a.value = err, true, v
		},
	}, arg)
}

// wantRefusal fails unless the answer is a refusal (by the validator when
// byValidator) with code and reason.
func wantRefusal(t *testing.T, what string, a answer, byValidator bool, code toolkit.Code, reason string) {
	t.Helper()
	err := a.err
	if byValidator {
		err = a.rejected
	}
	if !a.done || err == nil {
		t.Fatalf("%s: %+v, want a refusal", what, a)
	}
	te := toolkit.AsError(err)
	if te.Code != code || (reason != "" && te.Details["reason"] != reason) {
		t.Fatalf("%s: %s %v, want %s %s", what, te, te.Details, code, reason)
	}
}

// TestConfirmByUpdate: next_action answers with the published total; a
// stale hash is refused by the validator; two confirmations of the right
// hash each get their own answer — one created the draft order, the other
// is "already done" — with one write and no signal log entry.
func TestConfirmByUpdate(t *testing.T) {
	f := newFixture(t)
	var next, stale, first, second answer
	f.At(0, func() { f.update(UpdateNextAction, &next, NextActionInput{}) })
	f.At(time.Minute, func() {
		hash := f.status().Confirmation.QuoteHash
		f.update(UpdateConfirm, &stale, ConfirmInput{QuoteHash: "sha256:stale"})
		f.update(UpdateConfirm, &first, ConfirmInput{QuoteHash: hash})
		f.update(UpdateConfirm, &second, ConfirmInput{QuoteHash: hash})
	})
	res := f.run()
	if res.State != StateDraftCreated {
		t.Fatalf("result = %+v", res)
	}
	var st Status
	if !next.done || next.err != nil || next.get(&st) != nil || st.Confirmation == nil || ActionKey(st) != "confirm/"+res.Total.QuoteHash {
		t.Fatalf("next_action answered %+v with %+v", next, st)
	}
	wantRefusal(t, "stale hash", stale, true, toolkit.Conflict, workflows.RejectStaleQuoteHash)
	var a1, a2 ConfirmAnswer
	if first.err != nil || first.get(&a1) != nil || second.err != nil || second.get(&a2) != nil {
		t.Fatalf("confirmations: %+v / %+v", first, second)
	}
	if a1.AlreadyDone || !a2.AlreadyDone || a1.Result.DraftOrder.DraftOrderID != res.DraftOrder.DraftOrderID ||
		a2.Result.DraftOrder.DraftOrderID != res.DraftOrder.DraftOrderID {
		t.Fatalf("answers %+v / %+v", a1, a2)
	}
	if f.Count("CreateDraftOrder") != 1 || f.status().Rejected.Total != 0 {
		t.Fatalf("creates %d, rejected %+v", f.Count("CreateDraftOrder"), f.status().Rejected)
	}
}

// TestConfirmByUpdatePriceChanged: a confirmation accepted after the quote
// expired answers PRICE_CHANGED with the new hash once the re-quote moved
// the price; confirming the old hash again is refused the same way, and
// the new one creates the draft order.
func TestConfirmByUpdatePriceChanged(t *testing.T) {
	f := newFixture(t)
	f.newPrice, f.priceAfter = 2700, flowtest.T0.Add(16*time.Minute)
	var old, again, fresh answer
	var oldHash string
	f.At(20*time.Minute, func() {
		oldHash = f.status().Confirmation.QuoteHash
		f.update(UpdateConfirm, &old, ConfirmInput{QuoteHash: oldHash})
	})
	f.At(25*time.Minute, func() {
		f.update(UpdateConfirm, &again, ConfirmInput{QuoteHash: oldHash})
		f.update(UpdateConfirm, &fresh, ConfirmInput{QuoteHash: f.status().Confirmation.QuoteHash})
	})
	res := f.run()
	if res.State != StateDraftCreated || res.Total.QuoteHash == oldHash {
		t.Fatalf("result = %+v", res)
	}
	wantRefusal(t, "confirmed before the change", old, false, toolkit.PriceChanged, "")
	if te := toolkit.AsError(old.err); te.Details["quote_hash"] != res.Total.QuoteHash {
		t.Fatalf("PRICE_CHANGED names %v, want the new hash %s", te.Details, res.Total.QuoteHash)
	}
	wantRefusal(t, "old hash again", again, true, toolkit.PriceChanged, "")
	if !fresh.done || fresh.err != nil {
		t.Fatalf("new hash: %+v", fresh)
	}
}

// TestDecideByUpdate: an unknown approver is answered FORBIDDEN after the
// record call refused it, a stale approval id is refused by the
// validator, staff's decision is answered with its evidence, and the same
// decision again is "already done"; the signal log stays empty.
func TestDecideByUpdate(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	var unknown, stale, unsealed, decided, repeat answer
	var id string
	f.At(time.Minute, func() {
		id = f.status().Approvals.Pending.ApprovalID
		f.update(approval.UpdateApproval, &unknown, flowtest.SealedAs("mallory.nobody", id, "approve", ""))
		f.update(approval.UpdateApproval, &stale, flowtest.SealedAs("bob.compliance", "apr_0000000000000000", "approve", ""))
		// An active staff member's name, typed: no seal, refused before it is accepted.
		f.update(approval.UpdateApproval, &unsealed, approval.Signal{ApprovalID: id, Decision: "approve", Approver: "carol.admin"})
	})
	f.At(2*time.Minute, func() {
		f.update(approval.UpdateApproval, &decided, flowtest.SealedAs("bob.compliance", id, "approve", ""))
	})
	f.At(3*time.Minute, func() {
		f.update(approval.UpdateApproval, &repeat, flowtest.SealedAs("bob.compliance", id, "approve", ""))
	})
	f.At(4*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || res.Approval == nil || res.Approval.Approver != "bob.compliance" {
		t.Fatalf("result = %+v", res)
	}
	wantRefusal(t, "unknown approver", unknown, false, toolkit.Forbidden, workflows.RejectUnknownApprover)
	wantRefusal(t, "stale approval id", stale, true, toolkit.Conflict, workflows.RejectStaleApproval)
	wantRefusal(t, "unsealed decision", unsealed, true, toolkit.Unauthorized, workflows.RejectUnauthenticated)
	var d, r approval.Answer
	if decided.err != nil || decided.get(&d) != nil || d.AlreadyDone || !d.Outcome.Approved() || d.Outcome.Evidence == nil {
		t.Fatalf("decision: %+v %+v", decided, d)
	}
	if repeat.err != nil || repeat.get(&r) != nil || !r.AlreadyDone || r.Outcome.ApprovalID != id {
		t.Fatalf("repeat: %+v %+v", repeat, r)
	}
	if n := f.status().Rejected.Total; n != 0 {
		t.Fatalf("update refusals went to the signal log: %+v", f.status().Rejected)
	}
}

// TestNextActionAnswersTheRefusal: a run that ends on a refusal while the
// start's next_action update waits (a tool answered NOT_FOUND) answers the
// update with the result, its whole error included, not with the state it
// was in.
func TestNextActionAnswersTheRefusal(t *testing.T) {
	f := newFixture(t)
	f.Failures["GetQuote"] = toolkit.Errorf(toolkit.NotFound, "SKU-NOPE is not in the catalogue").
		WithDetail("skus", []string{"SKU-NOPE"}).WithRecovery("remove the unknown items")
	var next answer
	f.At(0, func() { f.update(UpdateNextAction, &next, NextActionInput{}) })
	res := f.run()
	if res.State != StateNotFound {
		t.Fatalf("result = %+v", res)
	}
	var st Status
	if !next.done || next.err != nil || next.get(&st) != nil || st.Result == nil || st.Result.Error == nil ||
		st.Result.Error.RecoverySuggestion != "remove the unknown items" {
		t.Fatalf("next_action answered %+v (%+v), want the NOT_FOUND result with its error", next, st.Result)
	}
}
