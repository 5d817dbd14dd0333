package client_test

import (
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestDecodeDraftOrderInputIsStrict: every way a hand-written order file
// goes wrong is INVALID_ARGUMENT naming what is wrong.
func TestDecodeDraftOrderInputIsStrict(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"items":[{"sku":"A","quantity":"2"}]}`, "field items.quantity must be int"},
		{`{"items":[{"sku":"A","quantity":2,"colour":"red"}]}`, `unknown field "colour"`},
		{`{"items":[],"items":[]}`, `Duplicate key: "items"`},
		{`{"ship_to":{"city":"A","city":"B"}}`, `Duplicate key: "city"`},
		{`{"confirm_window":"30m"}`, "field confirm_window must be a duration in nanoseconds"},
		{`[1]`, "one JSON object"},
		{`{"items":[]} {"items":[]}`, "not valid JSON"},
		{`{"items":`, "not valid JSON"},
		{``, "one JSON object"},
	} {
		_, err := client.DecodeDraftOrderInput(strings.NewReader(tc.doc))
		if toolkit.CodeOf(err) != toolkit.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT with %q", tc.doc, err, tc.want)
		}
	}
	in, err := client.DecodeDraftOrderInput(strings.NewReader(`{"request":{"user_id":"u_1"},"items":[{"sku":"A","quantity":2}],"confirm_window":60000000000}`))
	if err != nil || in.Request.UserID != "u_1" || in.Items[0].Quantity != 2 || in.ConfirmWindow.Seconds() != 60 {
		t.Fatalf("good order: %+v, %v", in, err)
	}
}
