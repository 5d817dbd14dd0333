package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

var berlin = Address{Name: "Erika Mustermann", Line1: "Heidestraße 17", City: "Köln", PostalCode: "51147", Country: "DE"}

func draftArgs(t *testing.T) CreateDraftOrderArgs {
	t.Helper()
	tot, err := ComputeTotal(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	return CreateDraftOrderArgs{Total: tot, ConfirmedQuoteHash: tot.QuoteHash, ShipTo: berlin}
}

func (e *env) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) audits(t *testing.T, corr string) []evidence.AuditRecord {
	t.Helper()
	a, err := e.store.AuditsForCorrelation(context.Background(), corr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestDraftOrderIsWrittenOnceWithItsAudit(t *testing.T) {
	e := newEnv(t)
	args := draftArgs(t)
	req := request("u_42", "checkout-0001")
	d, resp, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, req, args)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.DraftOrderID, "do_") || d.Status != DraftStatusOpen || d.Replayed || resp.SnapshotID() == "" {
		t.Fatalf("draft %+v", d)
	}
	if got := d.ExpiresAt.Sub(*e.now.Load()); got != DraftOrderTTL {
		t.Fatalf("expires in %s", got)
	}
	a := e.audits(t, req.CorrelationID)
	if len(a) != 1 || a[0].Status != evidence.AuditSuccess || !a[0].TwoPhase || !strings.Contains(string(a[0].EvidenceRefs), d.DraftOrderID) {
		t.Fatalf("audit %+v", a)
	}

	// The same key again (a new request, as after a client retry): the same
	// draft, no second row.
	again, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_42", "checkout-0001"), args)
	if err != nil {
		t.Fatal(err)
	}
	if again.DraftOrderID != d.DraftOrderID || !again.ExpiresAt.Equal(d.ExpiresAt) || !again.Replayed {
		t.Fatalf("replay %+v vs %+v", again, d)
	}
	// Even after the total expired, the repeat is answered from the row.
	e.advance(time.Hour)
	late, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_42", "checkout-0001"), args)
	if err != nil || late.DraftOrderID != d.DraftOrderID {
		t.Fatalf("late replay %+v %v", late, err)
	}
	if n := e.count(t, `SELECT count(*) FROM draft_orders`); n != 1 {
		t.Fatalf("%d rows", n)
	}
	// The scope is per user: another user with the same key gets their own.
	e.advance(-time.Hour)
	other, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_43", "checkout-0001"), args)
	if err != nil || other.DraftOrderID == d.DraftOrderID {
		t.Fatalf("other user %+v %v", other, err)
	}
}

func TestDraftOrderConcurrentSameKey(t *testing.T) {
	e := newEnv(t)
	args := draftArgs(t)
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_7", "race-key-0001"), args)
			ids[i], errs[i] = d.DraftOrderID, err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("call %d: %q %v (first %q)", i, ids[i], errs[i], ids[0])
		}
	}
	if c := e.count(t, `SELECT count(*) FROM draft_orders`); c != 1 {
		t.Fatalf("%d rows", c)
	}
	// Every call that got as far as its pending audit closed it.
	if c := e.count(t, `SELECT count(*) FROM audit_events WHERE status = 'pending'`); c != 0 {
		t.Fatalf("%d audits left pending", c)
	}
}

func TestDraftOrderKeyReusedForAnotherTotalConflicts(t *testing.T) {
	e := newEnv(t)
	args := draftArgs(t)
	if _, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "reuse-key-01"), args); err != nil {
		t.Fatal(err)
	}
	in := fixture(t)
	in.Shipping.Cost = eur(990)
	tot, _ := ComputeTotal(in)
	_, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "reuse-key-01"),
		CreateDraftOrderArgs{Total: tot, ConfirmedQuoteHash: tot.QuoteHash, ShipTo: berlin})
	wantCode(t, err, "CONFLICT")
}

func TestDraftOrderDryRunWritesNothing(t *testing.T) {
	e := newEnv(t)
	req := request("u_1", "dry-run-key-1")
	req.DryRun = true
	d, resp, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, req, draftArgs(t))
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != DraftStatusValidated || d.DraftOrderID != "" || !contains(resp.Warnings, toolkit.WarnDryRun) {
		t.Fatalf("dry run %+v %v", d, resp.Warnings)
	}
	if c := e.count(t, `SELECT count(*) FROM draft_orders`); c != 0 {
		t.Fatalf("%d rows", c)
	}
	if c := e.count(t, `SELECT count(*) FROM audit_events`); c != 0 {
		t.Fatalf("%d audit rows", c)
	}
	// A dry run still validates.
	bad := draftArgs(t)
	bad.ShipTo.PostalCode = "5114"
	_, _, err = invoke[DraftOrder](t, e, ToolCreateDraftOrder, req, bad)
	wantCode(t, err, "ADDRESS_INVALID")
}

func TestDraftOrderAuditFailureMeansNoRow(t *testing.T) {
	e := newEnv(t, func(d *ToolDeps) {
		d.DraftSigner = evidencetest.Signer(t, evidence.WriterWorker)
		d.Audit = failingAudit{d.Audit}
	})
	_, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "audit-down-01"), draftArgs(t))
	te := wantCode(t, err, "UPSTREAM_ERROR")
	if !te.CanRetry {
		t.Fatal("an audit outage is transient and must be retryable")
	}
	if c := e.count(t, `SELECT count(*) FROM draft_orders`); c != 0 {
		t.Fatalf("%d rows written without an audit", c)
	}
}

func TestDraftOrderNeedsTheConfirmedHash(t *testing.T) {
	e := newEnv(t)
	args := draftArgs(t)
	args.ConfirmedQuoteHash = "sha256:" + strings.Repeat("0", 64)
	_, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "confirm-key-1"), args)
	wantCode(t, err, "NEEDS_USER_CONFIRMATION")

	// A total edited after hashing is refused as such.
	args = draftArgs(t)
	args.Total.Shipping = eur(0)
	args.Total.GrandTotal = eur(args.Total.GrandTotal.Amount - 1290)
	_, _, err = invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "confirm-key-1"), args)
	wantCode(t, err, "INVALID_ARGUMENT")

	// An expired total must be re-quoted and confirmed again.
	e.advance(16 * time.Minute)
	_, _, err = invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "confirm-key-1"), draftArgs(t))
	wantCode(t, err, "NEEDS_USER_CONFIRMATION")
	if c := e.count(t, `SELECT count(*) FROM draft_orders`); c != 0 {
		t.Fatalf("%d rows", c)
	}
}

func TestDraftOrderAddressIsValidatedAndSealed(t *testing.T) {
	e := newEnv(t)
	args := draftArgs(t)
	args.ShipTo = Address{Name: "Erika", Line1: "", City: "Köln", PostalCode: "ABCDE", Country: "DE"}
	_, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "address-key-1"), args)
	te := wantCode(t, err, "ADDRESS_INVALID")
	f, _ := te.Details["fields"].([]string)
	if strings.Join(f, ",") != "ship_to.line1,ship_to.postal_code" {
		t.Fatalf("fields %v", f)
	}
	// Another country than the total was computed for.
	args = draftArgs(t)
	args.ShipTo = Address{Name: "Jean", Line1: "1 rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	_, _, err = invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "address-key-1"), args)
	wantCode(t, err, "ADDRESS_INVALID")

	d, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", "address-key-1"), draftArgs(t))
	if err != nil {
		t.Fatal(err)
	}
	var sealed, nonce []byte
	var keyID, country, postal, userHash string
	if err := e.pool.QueryRow(context.Background(), `SELECT ship_to_sealed, ship_to_nonce, ship_to_key_id, ship_to_country,
		ship_to_postal, user_id_hash FROM draft_orders WHERE draft_order_id = $1`, d.DraftOrderID).
		Scan(&sealed, &nonce, &keyID, &country, &postal, &userHash); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "Heidestra") || country != "DE" || postal != "51147" || userHash == "u_1" {
		t.Fatalf("stored in clear: %q %s %s %s", sealed, country, postal, userHash)
	}
	// Nothing in the row's clear columns names the street or the recipient.
	if c := e.count(t, `SELECT count(*) FROM draft_orders WHERE total::text LIKE '%Heidestra%' OR total::text LIKE '%Erika%'`); c != 0 {
		t.Fatal("PII in the stored total")
	}
	plain, err := e.cipher.Open(keyID, nonce, sealed, []byte("cartwright/draft-order/ship-to/v1\x00"+d.DraftOrderID))
	if err != nil {
		t.Fatal(err)
	}
	var back Address
	if err := json.Unmarshal(plain, &back); err != nil || back.Line1 != berlin.Line1 {
		t.Fatalf("decrypted %+v %v", back, err)
	}
}

func TestDraftOrderNeedsAnIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	_, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, request("u_1", ""), draftArgs(t))
	wantCode(t, err, "INVALID_ARGUMENT")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flakyDrafts fails its first Create with err, writing nothing (as the
// database rolls a failed statement back), then behaves.
type flakyDrafts struct {
	DraftStore
	err   error
	calls atomic.Int32
}

func (f *flakyDrafts) Create(ctx context.Context, d NewDraft, a evidence.TwoPhaseRow) (Created, error) {
	if f.calls.Add(1) == 1 {
		return Created{}, f.err
	}
	return f.DraftStore.Create(ctx, d, a)
}

func TestDraftOrderRetryAfterATransientStoreFailure(t *testing.T) {
	flaky := &flakyDrafts{err: errors.New("conn closed")}
	e := newEnv(t, func(d *ToolDeps) {
		flaky.DraftStore = PGDrafts{Pool: d.Pool, Signer: evidencetest.Signer(t, evidence.WriterWorker)}
		d.Drafts = flaky
	})
	req := request("u_1", "flaky-key-001")
	_, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, req, draftArgs(t))
	if te := wantCode(t, err, "UPSTREAM_ERROR"); !te.CanRetry {
		t.Fatal("a transient store failure must be retryable")
	}
	// One transaction: the failed attempt left neither an audit row nor a
	// draft (docs/evidence.md#one-transaction).
	if a := e.audits(t, req.CorrelationID); len(a) != 0 {
		t.Fatalf("audit after the failed attempt: %+v", a)
	}
	if c := e.count(t, `SELECT count(*) FROM draft_orders`); c != 0 {
		t.Fatalf("%d rows after the failed attempt", c)
	}
	// The activity's retry carries the same correlation id.
	retry := req
	retry.RequestID += "-retry"
	d, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, retry, draftArgs(t))
	if err != nil {
		t.Fatal(err)
	}
	if a := e.audits(t, req.CorrelationID); len(a) != 1 || a[0].Status != evidence.AuditSuccess || !strings.Contains(string(a[0].EvidenceRefs), d.DraftOrderID) {
		t.Fatalf("audit after the retry: %+v", a)
	}
}

func TestDraftOrderPermanentStoreFailureClosesTheAudit(t *testing.T) {
	flaky := &flakyDrafts{err: &PermanentError{Err: errors.New("check constraint")}}
	e := newEnv(t, func(d *ToolDeps) {
		flaky.DraftStore = PGDrafts{Pool: d.Pool, Signer: evidencetest.Signer(t, evidence.WriterWorker)}
		d.Drafts = flaky
	})
	req := request("u_1", "perm-key-0001")
	_, _, err := invoke[DraftOrder](t, e, ToolCreateDraftOrder, req, draftArgs(t))
	wantCode(t, err, "INVALID_ARGUMENT")
	if a := e.audits(t, req.CorrelationID); len(a) != 1 || a[0].Status != evidence.AuditFailed {
		t.Fatalf("audit %+v", a)
	}
	if c := e.count(t, `SELECT count(*) FROM draft_orders`); c != 0 {
		t.Fatalf("%d rows", c)
	}
}
