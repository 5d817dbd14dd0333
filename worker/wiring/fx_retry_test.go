package wiring_test

import (
	"context"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// The idempotency key is the order (docs/backend.md#the-go-client): a
// retry after the exchange rates in use stopped pricing the order's
// currency attaches to the run its key holds and answers with it, while a
// new key in that currency is still refused before anything starts. The
// rates changing between a start and its retry is played by two workers
// on one database: one pricing with the shipped table (NOK priced), one
// with a stored feed day that lacks NOK (lateFeedXML); the workers keep
// their rates 30 s, which a test should not wait for.
func TestRetryAttachesWhenTheRatesNoLongerPriceTheCurrency(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	s, _ := startWithLateFeed(ctx, t)
	shippedTQ, _ := s.AddWorker(t, wiringtest.Options{})
	before, after := dialClient(ctx, t, shippedTQ), dialClient(ctx, t, s.TaskQueue)
	oslo := commerce.Address{Name: "Ola Nordmann", Line1: "Karl Johans gate 1", City: "Oslo", PostalCode: "0154", Country: "NO"}
	order := func(key string) draftorder.Input {
		return draftorder.Input{
			Request: toolkit.Request{UserID: "u_fxretry", IdempotencyKey: key, Currency: "NOK"},
			Order:   commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, ShipTo: oslo, Currency: "NOK"},
		}
	}

	key := "fx-retry-" + s.TaskQueue
	id, _ := workflows.DraftOrderID("u_fxretry", key)
	s.TerminateLater(t, id)
	first, err := before.StartDraftOrder(ctx, order(key))
	if err != nil || first.Status.Total == nil || first.Status.Total.GrandTotal.Currency != "NOK" {
		t.Fatalf("NOK while the rates price it: %+v %v", first.Status, err)
	}

	// The same order again, its client now asking workers whose rates
	// lack NOK: the key's run answers, nothing new starts.
	again, err := after.StartDraftOrder(ctx, order(key))
	if err != nil {
		t.Fatalf("the retry of a started NOK order: %v", err)
	}
	if !again.Attached || again.RunID != first.RunID || again.Status.Total == nil ||
		again.Status.Total.GrandTotal != first.Status.Total.GrandTotal {
		t.Fatalf("the retry: attached %v, run %s (first %s), total %+v (first %+v)", again.Attached, again.RunID, first.RunID,
			again.Status.Total, first.Status.Total)
	}

	// A new key in NOK is refused there, before anything starts.
	fresh := order("fx-retry-new-" + s.TaskQueue)
	if _, err := after.StartDraftOrder(ctx, fresh); toolkit.AsError(err).Code != toolkit.InvalidArgument {
		t.Fatalf("a new NOK order where the rates lack NOK: %v, want INVALID_ARGUMENT", err)
	}
	freshID, _ := workflows.DraftOrderID("u_fxretry", fresh.Request.IdempotencyKey)
	if _, err := s.Temporal.DescribeWorkflowExecution(ctx, freshID, ""); err == nil {
		t.Fatal("a workflow exists for the refused order")
	}
}
