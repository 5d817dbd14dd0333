package draftorder

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
)

// badOrders are inputs the run would refuse, each with the field the
// refusal must name (docs/backend.md#idempotency-keys: refused before the start).
var badOrders = []struct {
	name, field string
	spoil       func(*Input)
}{
	{"quantity 0", "items.0.quantity", func(in *Input) { in.Items[0].Quantity = 0 }},
	{"quantity -1", "items.0.quantity", func(in *Input) { in.Items[0].Quantity = -1 }},
	{"quantity 10^12", "items.0.quantity", func(in *Input) { in.Items[0].Quantity = 1_000_000_000_000 }},
	{"malformed sku", "items.0.sku", func(in *Input) { in.Items[0].SKU = "no such sku" }},
	{"currency XYZ", "currency", func(in *Input) { in.Request.Currency = "XYZ" }},
	{"currency lower case", "request.currency", func(in *Input) { in.Request.Currency = "eur" }},
	{"201-character name", "ship_to.name", func(in *Input) { in.ShipTo.Name = strings.Repeat("n", 201) }},
	{"destination MX", "ship_to.country", func(in *Input) {
		in.ShipTo = commerce.Address{Name: "Ana", Line1: "Av. Reforma 1", City: "CDMX", PostalCode: "06600", Country: "MX"}
	}},
	{"confirm_window -1", "confirm_window", func(in *Input) { in.ConfirmWindow = -1 }},
	{"approval_window -1h", "approval_window", func(in *Input) { in.ApprovalWindow = -time.Hour }},
	{"approval_confidence 2", "approval_confidence", func(in *Input) { in.ApprovalConfidence = 2 }},
	{"actor.type root", "request.actor.type", func(in *Input) { in.Request.Actor.Type = "root" }},
	{"shipping_service teleport", "shipping_service", func(in *Input) { in.ShippingService = "teleport" }},
	{"no items", "items", func(in *Input) { in.Items = nil }},
	{"e-mail as user id", "request.user_id", func(in *Input) { in.Request.UserID = "erika@example.com" }},
}

// TestCheckRefusesWhatTheRunWouldRefuse: Check names the field
// of every bad input, and the workflow, running the same Check at its
// start, fails INVALID_ARGUMENT before any tool is called.
func TestCheckRefusesWhatTheRunWouldRefuse(t *testing.T) {
	for _, tc := range badOrders {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.spoil(&f.in)
			_, err := f.in.Check()
			te, ok := err.(*toolkit.Error)
			if !ok || te.Code != toolkit.InvalidArgument {
				t.Fatalf("Check: %v, want INVALID_ARGUMENT", err)
			}
			fields, _ := te.Details["fields"].([]string)
			if !slices.Contains(fields, tc.field) {
				t.Fatalf("Check names %v (%s), want %s", fields, te.Message, tc.field)
			}
			if tc.field == "request.user_id" {
				return // the run's id could not even be built
			}
			f.Env.ExecuteWorkflow(WorkflowName, f.in)
			// The run ends canceled, never failed, with the check's own
			// error as its details (refuseStart).
			var canceled *temporal.CanceledError
			if err := f.Env.GetWorkflowError(); !errors.As(err, &canceled) {
				t.Fatalf("run ended %v, want canceled", err)
			}
			var ran toolkit.Error
			if err := canceled.Details(&ran); err != nil || ran.Code != toolkit.InvalidArgument {
				t.Fatalf("canceled with %+v (%v), want INVALID_ARGUMENT", ran, err)
			}
			if fields := fmt.Sprint(ran.Details["fields"]); !strings.Contains(fields, tc.field) {
				t.Fatalf("run's refusal names %v, want %s", ran.Details["fields"], tc.field)
			}
			for _, a := range []string{"ChooseOrigins", "GetQuote", "CheckCompliance"} {
				if n := f.Count(a); n != 0 {
					t.Fatalf("%s called %d times for a refused input", a, n)
				}
			}
		})
	}
}

// TestCheckFillsTheDefaultsTheRunUses: a valid input passes and
// gets the same defaults the run works with.
func TestCheckFillsTheDefaultsTheRunUses(t *testing.T) {
	f := newFixture(t)
	in, err := f.in.Check()
	if err != nil {
		t.Fatal(err)
	}
	if in.Currency != "EUR" || in.ShippingService != DefaultShippingService || in.Incoterm != commerce.IncotermDDP ||
		in.ConfirmWindow != DefaultConfirmWindow || in.ApprovalWindow != approval.DefaultWindow ||
		in.ApprovalConfidence != DefaultApprovalConfidence {
		t.Fatalf("defaults not filled: %+v", in)
	}
	if _, err := f.in.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestFingerprintBindsTheOrder: the fingerprint follows what was
// ordered (items, address, currency, service, incoterm), not how it was
// asked (request id, trace, windows, item order), and shows no PII.
func TestFingerprintBindsTheOrder(t *testing.T) {
	base := newFixture(t).in
	base.Items = append(base.Items, commerce.LineItem{SKU: "SKU-CABLE", Quantity: 1})
	fp := func(in Input) string {
		t.Helper()
		c, err := in.Check()
		if err != nil {
			t.Fatal(err)
		}
		s, err := Fingerprint(c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := fp(base)
	if !strings.HasPrefix(want, "sha256:") || len(want) != 71 || strings.Contains(want, "Erika") {
		t.Fatalf("fingerprint %q", want)
	}
	same := base
	same.Request.RequestID, same.ConfirmWindow = "req-other", time.Hour
	same.Items = []commerce.LineItem{base.Items[1], base.Items[0]}
	if got := fp(same); got != want {
		t.Fatalf("same order, other request: %s != %s", got, want)
	}
	other := map[string]func(*Input){
		"quantity": func(in *Input) {
			in.Items = []commerce.LineItem{{SKU: "SKU-HEADPHONES", Quantity: 3}, in.Items[1]}
		},
		"street":   func(in *Input) { in.ShipTo.Line1 = "Unter den Linden 2" },
		"currency": func(in *Input) { in.Request.Currency = "USD" },
		"service":  func(in *Input) { in.ShippingService = commerce.ServiceExpress },
		"incoterm": func(in *Input) { in.Incoterm = commerce.IncotermDAP },
	}
	for name, change := range other {
		in := base
		in.Items = append([]commerce.LineItem(nil), base.Items...)
		change(&in)
		if fp(in) == want {
			t.Fatalf("another %s has the same fingerprint", name)
		}
	}
	opts, err := StartOptions("q", mustCheck(t, base))
	if err != nil || opts.Memo[workflows.MemoInputFingerprint] != want {
		t.Fatalf("start options memo %v, want %s (%v)", opts.Memo, want, err)
	}
}

func mustCheck(t *testing.T, in Input) Input {
	t.Helper()
	c, err := in.Check()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startRefusal is the check's error a run refused at its start ended
// canceled with (refuseStart); a zero Error for any other end.
func startRefusal(err error) toolkit.Error {
	var canceled *temporal.CanceledError
	var te toolkit.Error
	if errors.As(err, &canceled) {
		_ = canceled.Details(&te)
	}
	return te
}
