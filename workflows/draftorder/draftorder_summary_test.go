package draftorder

import (
	"testing"

	"github.com/cartwright-dev/cartwright/commerce"
)

// The activity summaries in the Web UI count units and lines the way
// Current Details does; "1 item(s)" for a line of three misled staff.
func TestBasketCountsUnitsAndLines(t *testing.T) {
	d := &draftOrder{in: Input{Order: commerce.Order{Items: []commerce.LineItem{{SKU: "A", Quantity: 3}, {SKU: "B", Quantity: 2}}}}}
	if got, want := d.basket(), "5 unit(s) in 2 line(s)"; got != want {
		t.Errorf("basket() = %q, want %q", got, want)
	}
}
