package wiring_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	cwclient "github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// lateFeedXML is a feed in the ECB's format dated yesterday, shaped like
// a late-2026 publication: no BGN (Bulgaria adopted the euro on
// 2026-01-01), THB priced — and, unlike the ECB's, no NOK, so a currency
// the shipped table prices (data/fx_rates.json has NOK) is one the rates
// in use lack, and Norway's NOK threshold must come from elsewhere. The
// rates are illustrative: the test is about which currencies exist.
func lateFeedXML(day string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
	<Cube><Cube time='` + day + `'>`)
	for _, r := range [][2]string{{"USD", "1.1571"}, {"JPY", "180.12"}, {"CZK", "24.21"}, {"DKK", "7.4689"}, {"GBP", "0.8812"},
		{"HUF", "386.4"}, {"PLN", "4.236"}, {"RON", "5.09"}, {"SEK", "10.98"}, {"CHF", "0.9312"}, {"AUD", "1.772"},
		{"CAD", "1.621"}, {"CNY", "8.22"}, {"SGD", "1.503"}, {"THB", "37.415"}, {"ZAR", "20.1"}} {
		fmt.Fprintf(&b, "\n\t\t<Cube currency='%s' rate='%s'/>", r[0], r[1])
	}
	b.WriteString("\n\t</Cube></Cube>\n</gesmes:Envelope>\n")
	return b.String()
}

// startWithLateFeed starts a stack whose worker reads the ECB feed from
// lateFeedXML, and stores the feed's day (returned) through FetchFXRates,
// so the rates in use are that day's.
func startWithLateFeed(ctx context.Context, t *testing.T) (*wiringtest.Stack, string) {
	t.Helper()
	day := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(lateFeedXML(day)))
	}))
	t.Cleanup(srv.Close)
	s := wiringtest.StartWith(t, wiringtest.Options{Configure: func(c *config.Config) {
		c.FXFeedURL = srv.URL + "/stats/eurofxref/eurofxref-daily.xml"
	}})
	fetch, err := s.Temporal.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "test-fx-" + s.TaskQueue, TaskQueue: s.TaskQueue},
		maintenance.FetchFXRatesWorkflowName, maintenance.FetchFXRatesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var fetched maintenance.FetchFXRatesResult
	if err := fetch.Get(ctx, &fetched); err != nil || fetched.Outcome != maintenance.FXRatesStored || fetched.Stored.Latest != day {
		t.Fatalf("fetch: %+v %v", fetched, err)
	}
	return s, day
}

// dialClient is a cartwright Go client on taskQueue with the test codec,
// closed at cleanup.
func dialClient(ctx context.Context, t *testing.T, taskQueue string) *cwclient.Client {
	t.Helper()
	so := sdkclient.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
	codec.Apply(&so, codectest.Codec())
	c, err := cwclient.New(ctx, cwclient.Options{Temporal: so, TaskQueue: taskQueue})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A draft order's currency is checked at its start against the exchange
// rates the worker prices with — the feed's stored day, not the shipped
// table (docs/tools.md#exchange-rates): NOK, which the shipped table
// prices and this feed does not, is INVALID_ARGUMENT naming currency and
// offering only the feed's currencies, and no workflow exists — from the
// Go client; a start that skips the client's check (another language's
// client) is refused by the run's first step through its update, the run
// ending canceled, never failed. THB, which the feed prices, starts, and
// its total shows the feed's date. An order to Norway, whose threshold
// currency (NOK) the feed lacks, is not refused for the caller's currency:
// it gets its total.
func TestStartChecksTheCurrencyAgainstTheRatesInUse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	s, day := startWithLateFeed(ctx, t)
	c := dialClient(ctx, t, s.TaskQueue)
	berlin := commerce.Address{Name: "Erika Muster", Line1: "Unter den Linden 1", City: "Berlin", PostalCode: "10117", Country: "DE"}
	order := func(key, currency string, to commerce.Address) draftorder.Input {
		return draftorder.Input{
			Request: toolkit.Request{UserID: "u_fxstart", IdempotencyKey: key, Currency: currency},
			Order:   commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, ShipTo: to, Currency: currency},
		}
	}
	refusedForCurrency := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no refusal", what)
		}
		te := toolkit.AsError(err)
		// []string as the client built it, []any through a history.
		supported := strings.Fields(strings.Trim(fmt.Sprint(te.Details["supported"]), "[]"))
		if te.Code != toolkit.InvalidArgument || fmt.Sprint(te.Details["fields"]) != "[currency]" ||
			!slices.Contains(supported, "THB") || slices.Contains(supported, "NOK") || slices.Contains(supported, "BGN") ||
			te.Details["rate_date"] != day || te.RecoverySuggestion == "" {
			t.Fatalf("%s: %v (details %v)", what, err, te.Details)
		}
	}

	// The Go client: refused before anything starts.
	nok := order("fx-nok-"+s.TaskQueue, "NOK", berlin)
	_, err := c.StartDraftOrder(ctx, nok)
	refusedForCurrency("NOK from the Go client", err)
	id, _ := workflows.DraftOrderID(nok.Request.UserID, nok.Request.IdempotencyKey)
	var notFound *serviceerror.NotFound
	if _, err := s.Temporal.DescribeWorkflowExecution(ctx, id, ""); !errors.As(err, &notFound) {
		t.Fatalf("a workflow exists for the refused order: %v", err)
	}

	// A client that skips that check (Update-with-Start as another
	// language's SDK sends it): the run's first step refuses through the
	// update, and the run ends canceled.
	raw, err := nok.Check()
	if err != nil {
		t.Fatal(err)
	}
	opts, err := draftorder.StartOptions(s.TaskQueue, raw)
	if err != nil {
		t.Fatal(err)
	}
	uh, err := s.Temporal.UpdateWithStartWorkflow(ctx, sdkclient.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: s.Temporal.NewWithStartWorkflowOperation(opts, draftorder.WorkflowName, raw),
		UpdateOptions: sdkclient.UpdateWorkflowOptions{UpdateName: draftorder.UpdateNextAction,
			Args: []any{draftorder.NextActionInput{Order: &raw}}, WaitForStage: sdkclient.WorkflowUpdateStageCompleted},
	})
	if err == nil {
		err = uh.Get(ctx, nil)
	}
	refusedForCurrency("NOK past the client", err)
	if err := s.Temporal.GetWorkflow(ctx, id, "").Get(ctx, nil); err == nil {
		t.Fatal("the refused run completed")
	}
	desc, err := s.Temporal.DescribeWorkflowExecution(ctx, id, "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Fatalf("the refused run ended %v (%v), want canceled", desc.GetWorkflowExecutionInfo().GetStatus(), err)
	}
	// The check comes before the quote's first tool call: nothing of the
	// refused order is in the evidence store.
	var rows int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE workflow_id = $1`, id).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("the refused run wrote %d evidence rows (%v), want none", rows, err)
	}

	// THB, which the feed prices, starts and is priced with the feed's day.
	h, err := c.StartDraftOrder(ctx, order("fx-thb-"+s.TaskQueue, "THB", berlin))
	if err != nil {
		t.Fatalf("THB: %v", err)
	}
	if tot := h.Status.Total; tot == nil || tot.FXRates == nil || tot.FXRates.Source != commerce.FXSourceFeed || tot.FXRates.Date != day ||
		tot.GrandTotal.Currency != "THB" {
		t.Fatalf("THB status: %+v", h.Status)
	}
	// The Web UI's current details say it too.
	v, err := s.Temporal.QueryWorkflow(ctx, h.WorkflowID, "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatal(err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil || !strings.Contains(md.GetCurrentDetails(), "- exchange rates: ecb feed of "+day) {
		t.Fatalf("current details (%v):\n%s", err, md.GetCurrentDetails())
	}

	// Norway: NOK thresholds, which the feed lacks, are no fault of an
	// order in EUR.
	oslo := commerce.Address{Name: "Ola Nordmann", Line1: "Karl Johans gate 1", City: "Oslo", PostalCode: "0154", Country: "NO"}
	h, err = c.StartDraftOrder(ctx, order("fx-oslo-"+s.TaskQueue, "EUR", oslo))
	if err != nil || h.Status.Total == nil || h.Status.Result != nil {
		t.Fatalf("EUR to Norway with a feed without NOK: %+v %v", h.Status, err)
	}
	// Three starts asked the workers once: the answer is kept (ratesFor).
	asks := fmt.Sprintf("WorkflowType = %q AND TaskQueue = %q", maintenance.RatesInUseWorkflowName, s.TaskQueue)
	for {
		n, err := s.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: asks})
		if err == nil && n.GetCount() == 1 {
			break
		}
		if err == nil && n.GetCount() > 1 || ctx.Err() != nil {
			t.Fatalf("FXRatesInUse runs for three starts: %v (%v), want 1", n.GetCount(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, key := range []string{"fx-thb-", "fx-oslo-"} {
		id, _ := workflows.DraftOrderID("u_fxstart", key+s.TaskQueue)
		s.TerminateLater(t, id)
	}
}
