package commerce

import (
	"reflect"
	"testing"
	"time"
)

// sampleTotal has a distinct value in every field.
func sampleTotal() Total {
	eur := func(a int64) Money { return Money{Amount: a, Currency: "EUR"} }
	return Total{
		QuoteID: "qt_01", Currency: "EUR",
		Lines:    []TotalLine{{SKU: "TEE-ORG-M-WHT", Quantity: 2, UnitPrice: eur(1999), LineTotal: eur(3998)}},
		Subtotal: eur(3998), Shipping: eur(495), ShippingOptionID: "std", Duty: eur(0), Tax: eur(760),
		Incoterm: IncotermDDP, ShipToCountry: "DE", ShipToRegion: "BE", GrandTotal: eur(5253), DueOnDelivery: eur(0),
		ExpiresAt: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), QuoteHash: "sha256:old",
	}
}

// TestQuoteHashIsStable pins the hash of a known total: a confirmed hash
// must still match after a deployment, so its definition may not drift.
func TestQuoteHashIsStable(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Total)
		want string
	}{
		{"with region", func(*Total) {}, "sha256:5b9344af07dd643b3617f228507678fe9c9481f22a09db31c95e8c09e7c5385a"},
		{"without region", func(t *Total) { t.ShipToRegion = "" }, "sha256:120a6e835161addf9d093750104fc2ca4c5a3f4341a3b29824553540556de895"},
	} {
		tot := sampleTotal()
		tc.edit(&tot)
		got, err := QuoteHash(tot)
		if err != nil || got != tc.want {
			t.Errorf("%s: QuoteHash = %s (%v), want %s", tc.name, got, err, tc.want)
		}
	}
}

// TestQuoteHashCoversEveryPricedField: changing any field of Total changes
// the hash, except the four that are not priced content (the quote's id,
// its expiry, the hash itself, the warehouse, whose effect on the amounts
// is hashed through them). A field added to Total is covered without
// anyone remembering to list it.
func TestQuoteHashCoversEveryPricedField(t *testing.T) {
	// A split total's parcels are hashed when present (a total without
	// them hashes as it always did: TestQuoteHashIsStable).
	sample := func() Total {
		tot := sampleTotal()
		tot.Parcels = []TotalParcel{{ShipFrom: "DE", Items: []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}}}
		return tot
	}
	base, err := QuoteHash(sample())
	if err != nil {
		t.Fatal(err)
	}
	// Evidence is the seal over the hash (docs/quote-seals.md#the-seal).
	// FXRates and TaxNotModelled say what the amounts assumed; the
	// amounts they shaped are hashed.
	notPriced := map[string]bool{"QuoteID": true, "ExpiresAt": true, "QuoteHash": true, "ShipFrom": true, "Evidence": true,
		"FXRates": true, "TaxNotModelled": true}
	typ := reflect.TypeOf(Total{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tot := sample()
		v := reflect.ValueOf(&tot).Elem().Field(i)
		v.Set(reflect.Zero(f.Type))
		got, err := QuoteHash(tot)
		if err != nil {
			t.Fatal(err)
		}
		if changed := got != base; changed == notPriced[f.Name] {
			t.Errorf("field %s: hash changed=%v, want %v", f.Name, changed, !notPriced[f.Name])
		}
	}
}
