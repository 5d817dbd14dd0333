package draftorder

import (
	"testing"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// BenchmarkSameOrder is the run's check of an Update-with-Start's order
// (validateNextAction): what an Update-with-Start adds to a draft order's
// worker CPU, two fingerprints of the order (measured ~0.15 ms on a busy
// 2-core machine, against a budget of 1 ms an order for the new checks).
func BenchmarkSameOrder(b *testing.B) {
	order := Input{
		Request: toolkit.Request{RequestID: "req-test", UserID: "u_123", IdempotencyKey: "key-0001-abcd", Currency: "EUR"},
		Order: commerce.Order{
			Items:  []commerce.LineItem{{SKU: "SKU-HEADPHONES", Quantity: 2}, {SKU: "TEE-ORG-M-WHT", Quantity: 1}},
			ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Unter den Linden 1", City: "Berlin", PostalCode: "10117", Country: "DE"},
		},
	}
	run, err := order.Check()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := sameOrder("draft-order/u_123/key-0001-abcd", run, order); err != nil {
			b.Fatal(err)
		}
	}
}
