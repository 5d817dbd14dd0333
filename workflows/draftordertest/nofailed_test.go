package draftordertest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/commerce/rules/address"
	"github.com/cartwright-dev/cartwright/commerce/rules/tax"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// matrixOrder is one draft order of the matrix and the outcome it must
// reach ("" for an order to every destination: a total to confirm, or any
// business outcome, as long as it is a result).
type matrixOrder struct {
	label string
	in    draftorder.Input
	want  string
}

// TestDraftOrderMatrixLeavesNoFailedRun (docs/errors.md#draft-order-outcomes):
// on a Temporal dev server of its own (so its namespace holds only these
// runs), draft orders to every destination the tax rules model on every
// shipping service, confirmed through the Go client, and one of every
// business outcome — an unknown SKU, more than any warehouse holds, an
// invalid address, a compliance block, a dry run, a cancel, an expired
// confirmation. Every run ends with a result (the refusals with their whole
// error object), and the visibility query ExecutionStatus='Failed' returns
// nothing in the namespace. A control run started past the client with an
// input the start check refuses ends canceled, not failed, and the query
// for canceled runs finds it: the queries are not empty for want of reading.
func TestDraftOrderMatrixLeavesNoFailedRun(t *testing.T) {
	dev := testenv.StartDevServer(t, testenv.DevServerOptions{})
	tc := clienttest.DialAt(t, dev.Address)
	st := wiringtest.StartWith(t, wiringtest.Options{Temporal: tc, MaxConns: 24})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(8*time.Minute))
	defer cancel()
	so := sdkclient.Options{HostPort: dev.Address, Namespace: "default"}
	codec.Apply(&so, codectest.Codec())
	c, err := client.New(ctx, client.Options{Temporal: so, TaskQueue: st.TaskQueue})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	orders := matrixOrders(t)
	var (
		mu      sync.Mutex
		tally   = map[string]int{}
		ids     []string
		work    = make(chan matrixOrder)
		wg      sync.WaitGroup
		errs    []string
		workers = 6
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				id, state, err := driveMatrixOrder(ctx, c, o)
				mu.Lock()
				if id != "" {
					ids = append(ids, id)
				}
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", o.label, err))
				} else {
					tally[state]++
				}
				mu.Unlock()
			}
		}()
	}
	for _, o := range orders {
		work <- o
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		sort.Strings(errs)
		t.Fatalf("%d of %d orders went wrong:\n%s", len(errs), len(orders), strings.Join(errs, "\n"))
	}
	t.Logf("%d draft orders: %v", len(orders), tally)

	// Visibility catches up with the closes, then holds no failed run.
	// (The client's asks of the exchange rates in use, FXRatesInUse, are
	// runs of their own, not orders.)
	// Every written draft's run holds its stock and runs on by design
	// (docs/stock.md); every other order closed.
	awaitCount(ctx, t, tc, "ExecutionStatus='Completed' AND WorkflowType != '"+maintenance.RatesInUseWorkflowName+"'", len(ids)-tally[draftorder.StateDraftCreated])
	if n := count(ctx, t, tc, "ExecutionStatus='Failed'"); n != 0 {
		failed := list(ctx, t, tc, "ExecutionStatus='Failed'")
		t.Fatalf("ExecutionStatus='Failed' lists %d run(s) after the matrix: %v", n, failed)
	}
	// Only the written drafts' runs run on, each holding its stock.
	holding := "ExecutionStatus='Running' AND CartwrightState = '" + draftorder.StateHolding + "'"
	others := "ExecutionStatus='Running' AND CartwrightState != '" + draftorder.StateHolding + "'"
	if n := count(ctx, t, tc, others); n != 0 {
		t.Fatalf("%d run(s) still running after the matrix: %v", n, list(ctx, t, tc, others))
	}
	if n := count(ctx, t, tc, holding); n != tally[draftorder.StateDraftCreated] {
		t.Fatalf("%d run(s) hold stock, want one per written draft (%d)", n, tally[draftorder.StateDraftCreated])
	}

	// The control: a run started past the client with an input the start
	// check refuses does not fail either — it ends canceled with the
	// check's INVALID_ARGUMENT (docs/backend.md#other-languages) — and the
	// same kind of query finds it: the queries are not empty for want of
	// reading.
	bad := matrixInput("control-refused", commerce.LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 1}, deAddress(), "EUR", "")
	bad.Items = nil
	opts, err := draftorder.StartOptions(st.TaskQueue, bad)
	if err != nil {
		t.Fatal(err)
	}
	run, err := tc.ExecuteWorkflow(ctx, opts, draftorder.WorkflowName, bad)
	if err != nil {
		t.Fatal(err)
	}
	var canceled *temporal.CanceledError
	if err := run.Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("control run: %v, want canceled (INVALID_ARGUMENT)", err)
	}
	awaitCount(ctx, t, tc, "ExecutionStatus='Canceled'", 1)
	if got := list(ctx, t, tc, "ExecutionStatus='Canceled'"); len(got) != 1 || got[0] != run.GetID() {
		t.Fatalf("canceled runs %v, want only the control %s", got, run.GetID())
	}
	if n := count(ctx, t, tc, "ExecutionStatus='Failed'"); n != 0 {
		t.Fatalf("ExecutionStatus='Failed' lists %d run(s) after the control", n)
	}
}

// matrixOrders: the tee (stocked in every warehouse) to every destination
// the tax rules model, on every service, and one order per business
// outcome.
func matrixOrders(t *testing.T) []matrixOrder {
	t.Helper()
	tee := commerce.LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 1}
	var out []matrixOrder
	for _, cc := range tax.SupportedDestinations() {
		a := commerce.Address{Name: "Matrix Customer", Line1: "1 Test Street", City: "Testville", Country: cc, PostalCode: address.Example(cc)}
		if address.RequiresRegion(cc) {
			rs := address.RegionsFor(cc, a.PostalCode)
			if len(rs) == 0 {
				t.Fatalf("%s: the example postcode belongs to no region", cc)
			}
			a.Region = rs[0]
		}
		for _, svc := range []string{commerce.ServiceEconomy, commerce.ServiceStandard, commerce.ServiceExpress} {
			label := cc + "/" + svc
			out = append(out, matrixOrder{label: label, in: matrixInput(label, tee, a, tax.Currency(cc), svc)})
		}
	}
	badPostcode := commerce.Address{Name: "Matrix Customer", Line1: "1 Test Street", City: "London", Country: "GB", PostalCode: "12345"}
	usAddress := commerce.Address{Name: "Matrix Customer", Line1: "1 Test Street", City: "New York", Region: "NY", PostalCode: "10001", Country: "US"}
	dry := matrixInput("dry-run", tee, deAddress(), "EUR", "")
	dry.Request.DryRun = true
	expiring := matrixInput("expired", tee, deAddress(), "EUR", "")
	expiring.ConfirmWindow = 2 * time.Second
	return append(out,
		matrixOrder{"unknown sku", matrixInput("unknown-sku", commerce.LineItem{SKU: "NO-SUCH-SKU-MATRIX", Quantity: 1}, deAddress(), "EUR", ""), draftorder.StateNotFound},
		matrixOrder{"more than any warehouse holds", matrixInput("out-of-stock", commerce.LineItem{SKU: "WCH-AUTO-40-STL", Quantity: 999}, deAddress(), "EUR", ""), draftorder.StateOutOfStock},
		matrixOrder{"invalid GB postcode", matrixInput("bad-postcode", tee, badPostcode, "GBP", ""), draftorder.StateAddressInvalid},
		matrixOrder{"power bank by air", matrixInput("blocked", commerce.LineItem{SKU: "VC-PB20K-BLK", Quantity: 1}, usAddress, "USD", commerce.ServiceExpress), draftorder.StateComplianceBlocked},
		matrixOrder{"dry run", dry, draftorder.StateDryRunValidated},
		matrixOrder{"cancelled", matrixInput("cancelled", tee, deAddress(), "EUR", ""), draftorder.StateCancelled},
		matrixOrder{"expired confirmation", expiring, draftorder.StateExpired},
	)
}

func deAddress() commerce.Address {
	return commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}
}

func matrixInput(label string, item commerce.LineItem, to commerce.Address, currency, service string) draftorder.Input {
	key := uniqueKey("matrix-" + strings.NewReplacer("/", "-", " ", "-").Replace(label))
	return draftorder.Input{
		Request: toolkit.Request{UserID: "u_matrix", IdempotencyKey: key, Currency: currency,
			Client: toolkit.Client{App: "backend", Version: "test"}},
		Order: commerce.Order{Items: []commerce.LineItem{item}, ShipTo: to, ShippingService: service},
	}
}

// driveMatrixOrder starts o and plays the user: a published total is
// confirmed (cancelled for the "cancelled" row, left to expire for the
// "expired" one), a staff wait is cancelled. It returns the run's final
// state, or why the order broke the matrix's rules.
func driveMatrixOrder(ctx context.Context, c *client.Client, o matrixOrder) (string, string, error) {
	h, err := c.StartDraftOrder(ctx, o.in)
	if err != nil {
		return h.WorkflowID, "", fmt.Errorf("start: %w", err)
	}
	st := h.Status
	switch {
	case st.Result != nil:
	case o.want == draftorder.StateCancelled || st.Approvals.Pending != nil:
		if err := c.Cancel(ctx, h.WorkflowID, "matrix"); err != nil {
			return h.WorkflowID, "", fmt.Errorf("cancel: %w", err)
		}
	case o.want == draftorder.StateExpired:
	case st.Confirmation != nil:
		if _, err := c.ConfirmResult(ctx, h.WorkflowID, st.Confirmation.QuoteHash); err != nil {
			return h.WorkflowID, "", fmt.Errorf("confirm: %w", err)
		}
	default:
		return h.WorkflowID, "", fmt.Errorf("start answered %s with nothing to act on", st.State)
	}
	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil {
		return h.WorkflowID, "", fmt.Errorf("result: %w", err)
	}
	if o.want != "" && res.State != o.want {
		return h.WorkflowID, res.State, fmt.Errorf("ended %s (%s: %s), want %s", res.State, res.Code, res.Message, o.want)
	}
	if res.Code != "" && (res.Error == nil || res.Error.Code != res.Code || res.Error.RecoverySuggestion == "") {
		return h.WorkflowID, res.State, fmt.Errorf("ended %s without its whole error: %+v", res.State, res.Error)
	}
	return h.WorkflowID, res.State, nil
}

// count is the number of runs the visibility query finds.
func count(ctx context.Context, t *testing.T, tc sdkclient.Client, query string) int {
	t.Helper()
	resp, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
	if err != nil {
		t.Fatalf("count %q: %v", query, err)
	}
	return int(resp.GetCount())
}

// list is the workflow ids the visibility query finds (ListWorkflow).
func list(ctx context.Context, t *testing.T, tc sdkclient.Client, query string) []string {
	t.Helper()
	var ids []string
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			t.Fatalf("list %q: %v", query, err)
		}
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ids
		}
	}
}

// awaitCount waits until query lists want runs (visibility is written
// after the close).
func awaitCount(ctx context.Context, t *testing.T, tc sdkclient.Client, query string, want int) {
	t.Helper()
	for {
		n := len(list(ctx, t, tc, query))
		if n == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%q lists %d run(s), want %d", query, n, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
