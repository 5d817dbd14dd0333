package commerce

import (
	"slices"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

func codeOf(s string) toolkit.Code { return toolkit.Code(s) }

func TestComplianceBlocksAPowerBankByAir(t *testing.T) {
	e := newEnv(t)
	_, _, err := invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items:       []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}, {SKU: "VC-PB20K-BLK", Quantity: 1}},
		Destination: Address{Country: "US", Region: "CA", PostalCode: "94103"},
	})
	te := wantCode(t, err, "COMPLIANCE_BLOCKED")
	v, ok := te.Details["verdict"].(ComplianceVerdict)
	if !ok || v.Verdict != VerdictBlock || te.CanRetry {
		t.Fatalf("details %#v", te.Details)
	}
	found := false
	for _, r := range v.Reasons {
		found = found || (r.SKU == "VC-PB20K-BLK" && r.Code == "DG_LITHIUM_ION_STANDALONE_AIR")
	}
	if !found {
		t.Fatalf("reasons %+v", v.Reasons)
	}
}

func TestComplianceUncertainIsAnAnswer(t *testing.T) {
	e := newEnv(t)
	// Perfume by air is a flammable liquid (UN1266): possible under limited
	// quantity rules, which a person must confirm.
	v, resp, err := invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items: []LineItem{{SKU: "PRF-ROSE-EDP100", Quantity: 1}}, Destination: Address{Country: "FR", PostalCode: "75001"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.Verdict != VerdictUncertain || v.Confidence >= 0.8 || v.TransportMode != "air" || resp.SnapshotID() == "" || resp.Meta.RulesetVersion == "" {
		t.Fatalf("verdict %+v", v)
	}
	// Apparel and a laptop (battery inside the equipment) are allowed,
	// with the battery's condition as a requirement.
	v, _, err = invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items:       []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}, {SKU: "NBK-14AIR-16-512", Quantity: 1}},
		Destination: Address{Country: "DE", PostalCode: "10115"}, TransportMode: "ground",
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.Verdict != VerdictAllow || v.Confidence < 0.8 || len(v.Requirements) == 0 {
		t.Fatalf("verdict %+v", v)
	}
}

func TestComplianceDestinationRules(t *testing.T) {
	e := newEnv(t)
	items := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	_, _, err := invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items: items, Destination: Address{Country: "KP"}})
	wantCode(t, err, "COMPLIANCE_BLOCKED")
	// Canada needs the province; X (NT or NU) does not name one.
	_, _, err = invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items: items, Destination: Address{Country: "CA", PostalCode: "X1A 2P5"}})
	te := wantCode(t, err, "ADDRESS_INVALID")
	if f, _ := te.Details["fields"].([]string); len(f) != 1 || f[0] != "destination.region" {
		t.Fatalf("fields %v", te.Details["fields"])
	}
	// M (Toronto) names Ontario: the region is derived, and the envelope
	// says so.
	_, resp, err := invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items: items, Destination: Address{Country: "CA", PostalCode: "M5V 3L9"}})
	if err != nil || !slices.Contains(resp.Warnings, WarnAddressRegionDerived) {
		t.Fatalf("derived region: %v %v", err, resp)
	}
	// Wine to Saudi Arabia is prohibited whatever the mode.
	_, _, err = invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items: []LineItem{{SKU: "WIN-BDX19-750", Quantity: 1}}, Destination: Address{Country: "SA", PostalCode: "12211"}, TransportMode: "ground"})
	wantCode(t, err, "COMPLIANCE_BLOCKED")
}

// TestComplianceReasonsNameTheirSource: a rule's public reference reaches
// the tool's answer, so support staff see what the rule rests on.
func TestComplianceReasonsNameTheirSource(t *testing.T) {
	e := newEnv(t)
	v, _, err := invoke[ComplianceVerdict](t, e, ToolCheckCompliance, request("u_1", ""), CheckComplianceArgs{
		Items:       []LineItem{{SKU: "CHO-DARK70-100", Quantity: 3}},
		Destination: Address{Country: "AU", Region: "NSW", PostalCode: "2000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(v.Reasons, func(r ComplianceReason) bool { return r.Code == "BIOSECURITY_IMPORT_CONDITIONS" })
	if i < 0 || v.Reasons[i].Source != "https://www.agriculture.gov.au/biosecurity-trade/import/online-shopping" {
		t.Fatalf("reasons %+v", v.Reasons)
	}
}
