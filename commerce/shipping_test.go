package commerce

import (
	"testing"
)

func TestShippingOptionsCheapestFirstInTheOrderCurrency(t *testing.T) {
	e := newEnv(t)
	items := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}, {SKU: "BOK-BIRDS-GB-PB", Quantity: 1}}
	eurQ, resp, err := invoke[ShippingQuote](t, e, ToolQuoteShipping, request("u_1", ""), QuoteShippingArgs{
		Items: items, Currency: "EUR", Destination: Address{Country: "FR", PostalCode: "75001"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(eurQ.Options) < 3 || resp.SnapshotID() == "" || resp.TTLSeconds != int(ShippingTTL.Seconds()) {
		t.Fatalf("options %+v", eurQ)
	}
	levels := map[string]bool{}
	for i, o := range eurQ.Options {
		levels[o.ServiceLevel] = true
		if i > 0 && o.Cost.Amount < eurQ.Options[i-1].Cost.Amount {
			t.Fatalf("not cheapest first: %+v", eurQ.Options)
		}
		if o.Cost.Currency != "EUR" || o.MinDays > o.MaxDays || o.ChargeableGrams < 960 {
			t.Fatalf("option %+v", o)
		}
	}
	if !levels[ServiceEconomy] || !levels[ServiceStandard] || !levels[ServiceExpress] {
		t.Fatalf("service levels %v", levels)
	}
	// The same parcel priced in JPY is the EUR cost converted (¥, no decimals).
	jpy, _, err := invoke[ShippingQuote](t, e, ToolQuoteShipping, request("u_1", ""), QuoteShippingArgs{
		Items: items, Currency: "JPY", Destination: Address{Country: "FR", PostalCode: "75001"},
	})
	if err != nil {
		t.Fatal(err)
	}
	fx, _ := BuiltinFX()
	for i, o := range jpy.Options {
		want, _ := fx.Convert(eurQ.Options[i].Cost, "JPY")
		if o.Cost != want {
			t.Fatalf("%s: %v, want %v", o.OptionID, o.Cost, want)
		}
	}
}

func TestShippingValidatesTheDestination(t *testing.T) {
	e := newEnv(t)
	items := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	for name, tc := range map[string]struct {
		dest   Address
		code   string
		fields string
	}{
		"US without state":  {Address{Country: "US", PostalCode: "94103"}, "ADDRESS_INVALID", "destination.region"},
		"bad UK postcode":   {Address{Country: "GB", PostalCode: "12345"}, "ADDRESS_INVALID", "destination.postal_code"},
		"unknown country":   {Address{Country: "XX"}, "ADDRESS_INVALID", "destination.country"},
		"embargoed country": {Address{Country: "IR", City: "Tehran", PostalCode: "1193653471"}, "COMPLIANCE_BLOCKED", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := invoke[ShippingQuote](t, e, ToolQuoteShipping, request("u_1", ""), QuoteShippingArgs{Items: items, Currency: "EUR", Destination: tc.dest})
			te := wantCode(t, err, codeOf(tc.code))
			if tc.fields != "" {
				if f, _ := te.Details["fields"].([]string); len(f) != 1 || f[0] != tc.fields {
					t.Fatalf("fields %v", te.Details["fields"])
				}
			}
		})
	}
	_, _, err := invoke[ShippingQuote](t, e, ToolQuoteShipping, request("u_1", ""), QuoteShippingArgs{
		Items: []LineItem{{SKU: "NOPE-1234", Quantity: 1}}, Currency: "EUR", Destination: Address{Country: "DE", PostalCode: "10115"}})
	wantCode(t, err, "NOT_FOUND")
}
