package commerce

import (
	"fmt"
	"strings"
	"testing"
)

// A warehouse short of every line of a 50-line basket still gives a reason
// the output schema accepts (at most 500 characters), naming the first
// lines and how many more; the lines themselves are all in Short.
func TestShortReasonOfALongBasketFitsTheSchema(t *testing.T) {
	short := make([]StockShort, 50)
	for i := range short {
		short[i] = StockShort{SKU: fmt.Sprintf("TEE-SCALE-%d", i+1), Requested: 3, Available: 0}
	}
	got := shortReason("US", short)
	if len(got) > 500 {
		t.Fatalf("reason is %d characters, the schema allows 500: %s", len(got), got)
	}
	if !strings.HasPrefix(got, "US holds only TEE-SCALE-1 0 of 3") || !strings.HasSuffix(got, "and 45 more line(s)") {
		t.Fatalf("reason = %q", got)
	}
	if one := shortReason("GB", short[:1]); one != "GB holds only TEE-SCALE-1 0 of 3" {
		t.Fatalf("one line: %q", one)
	}
}
