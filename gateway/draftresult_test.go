package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/commerce"
)

// An agent that reads only the text must show the user the total in major
// units (22.60 EUR, not "2260 EUR"), the duty due on delivery, and get the
// confirm call's arguments as JSON it can send.
func TestConfirmationTextShowsMajorUnitsAndJSONArguments(t *testing.T) {
	v := DraftOrderView{Tool: ToolDraftStart, Confirmation: &ConfirmationAsk{
		ShowUser: ShowUser{GrandTotal: commerce.Money{Amount: 2260, Currency: "EUR"},
			DueOnDelivery: commerce.Money{Amount: 1999, Currency: "JPY"}, ConfirmBy: time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)},
		Send: Send{Tool: ToolDraftConfirm, Arguments: map[string]any{"idempotency_key": "k1", "quote_hash": "sha256:ab"}},
	}}
	text := draftResult(v, "corr-1").Content[0].(*mcp.TextContent).Text
	for _, want := range []string{"total 22.60 EUR", "+ 1999 JPY duty and tax due on delivery",
		`draft_order.confirm with {"idempotency_key":"k1","quote_hash":"sha256:ab"}`} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
}
