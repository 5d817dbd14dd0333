package commerce

import (
	"slices"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// The 74 Wh power bank (UN3480) by road, through the invoker and the
// output schema: ADR special provision 188 lets a lithium-ion battery of
// at most 100 Wh travel by road with the lithium battery mark, so the
// verdict is allow (no staff review) and names that regime alone; its
// message never mixes in the fully regulated class 9 regime. By air the
// same battery stays blocked (commerce/rules/README.md#how-each-one-models-the-world).
func TestPowerBankUnder100WhGoesByRoadUnderSP188(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	bank := []LineItem{{SKU: "VC-PB20K-BLK", Quantity: 1}}
	berlin := Address{Country: "DE", PostalCode: "10115"}
	v, resp, err := memCall[ComplianceVerdict](t, inv, ToolCheckCompliance, CheckComplianceArgs{Items: bank, Destination: berlin, TransportMode: "ground"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Verdict != VerdictAllow || resp.Status != toolkit.StatusOK || !slices.Contains(v.Requirements, "lithium_battery_mark") {
		t.Fatalf("74 Wh by road: verdict %s (confidence %.2f), requirements %v, reasons %+v", v.Verdict, v.Confidence, v.Requirements, v.Reasons)
	}
	for _, r := range v.Reasons {
		if r.SKU != "VC-PB20K-BLK" {
			continue
		}
		if r.Code != "DG_LITHIUM_SP188_ROAD" || !strings.Contains(r.Message, "special provision 188") ||
			strings.Contains(r.Message, "fully regulated") || strings.Contains(r.Message, "class 9") {
			t.Errorf("reason %s: %q mixes regimes or names the wrong one", r.Code, r.Message)
		}
	}
	_, _, err = memCall[ComplianceVerdict](t, inv, ToolCheckCompliance, CheckComplianceArgs{Items: bank, Destination: berlin, TransportMode: "air"})
	if te := toolkit.AsError(err); err == nil || te.Code != toolkit.ComplianceBlocked {
		t.Fatalf("74 Wh by air: %v", err)
	}
}
