package compliance

import (
	"slices"
	"testing"
)

func check(t *testing.T, in Input) Result {
	t.Helper()
	r, err := Check(in)
	if err != nil {
		t.Fatalf("Check(%+v): %v", in, err)
	}
	return r
}

func codesOf(r Result) []string {
	var out []string
	for _, x := range r.Reasons {
		out = append(out, x.Code)
	}
	return out
}

var tshirt = Item{SKU: "TEE-1", HSCode: "6109.10", OriginCountry: "PT"}

func TestTShirtAllowed(t *testing.T) {
	for _, mode := range []Mode{Air, Ground} {
		r := check(t, Input{Destination: Destination{Country: "US"}, Mode: mode, Items: []Item{tshirt}})
		if r.Verdict != Allow || r.Confidence < ApprovalThreshold || needsApproval(r) {
			t.Errorf("%s: %+v", mode, r)
		}
		if r.Items[0].Category != "apparel" || r.Items[0].CategorySource != "hs_code" {
			t.Errorf("category %+v", r.Items[0])
		}
		if r.RulesetVersion != "compliance-2026.11.3" {
			t.Errorf("version %q", r.RulesetVersion)
		}
	}
}

func TestEmbargoedDestinationsBlocked(t *testing.T) {
	for _, cc := range []string{"CU", "IR", "KP", "RU", "BY"} {
		r := check(t, Input{Destination: Destination{Country: cc}, Items: []Item{tshirt}})
		if r.Verdict != Block || r.Confidence < 0.9 {
			t.Errorf("%s: %s %.2f %v", cc, r.Verdict, r.Confidence, codesOf(r))
		}
	}
	// Syria's comprehensive sanctions were lifted in 2025: human review.
	r := check(t, Input{Destination: Destination{Country: "SY"}, Items: []Item{tshirt}})
	if r.Verdict != Uncertain || !needsApproval(r) {
		t.Errorf("SY: %+v", r)
	}
}

func TestSanctionedRegions(t *testing.T) {
	block := []Destination{
		{Country: "UA", Region: "UA-43"},
		{Country: "UA", Region: "Avtonomna Respublika Krym"},
		{Country: "UA", City: "Sevastopol"},
		{Country: "UA", PostalCode: "95000"},
		{Country: "UA", Region: "Luhansk Oblast"},
		{Country: "UA", Region: "DNR"},
	}
	for _, d := range block {
		if r := check(t, Input{Destination: d, Items: []Item{tshirt}}); r.Verdict != Block || !slices.Contains(codesOf(r), "SANCTIONED_REGION") {
			t.Errorf("%+v: %s %v", d, r.Verdict, codesOf(r))
		}
	}
	for _, d := range []Destination{{Country: "UA", Region: "Donetsk Oblast"}, {Country: "UA", PostalCode: "69000"}} {
		if r := check(t, Input{Destination: d, Items: []Item{tshirt}}); r.Verdict != Uncertain {
			t.Errorf("%+v: %s", d, r.Verdict)
		}
	}
	// Kyiv is fine.
	if r := check(t, Input{Destination: Destination{Country: "UA", Region: "Kyiv", PostalCode: "01001"}, Items: []Item{tshirt}}); r.Verdict != Allow {
		t.Errorf("Kyiv: %s %v", r.Verdict, codesOf(r))
	}
}

func TestLithiumBatteries(t *testing.T) {
	powerbank := Item{SKU: "PB-1", UNNumber: "UN3480"}
	r := check(t, Input{Destination: Destination{Country: "FR"}, Mode: Air, Items: []Item{powerbank}})
	if r.Verdict != Block || !slices.Contains(codesOf(r), "DG_LITHIUM_ION_STANDALONE_AIR") {
		t.Errorf("UN3480 by air: %s %v", r.Verdict, codesOf(r))
	}
	// The same power bank by HS code alone.
	r = check(t, Input{Destination: Destination{Country: "FR"}, Mode: Air, Items: []Item{{SKU: "PB-2", HSCode: "850760"}}})
	if r.Verdict != Block {
		t.Errorf("850760 by air: %s", r.Verdict)
	}
	// By road it is a class 9 DG shipment: human review.
	r = check(t, Input{Destination: Destination{Country: "FR"}, Mode: Ground, Items: []Item{powerbank}})
	if r.Verdict != Uncertain || r.Confidence >= ApprovalThreshold {
		t.Errorf("UN3480 by road: %s %.2f", r.Verdict, r.Confidence)
	}
	// A phone (battery contained, UN3481) flies within Section II limits.
	phone := Item{SKU: "PH-1", HSCode: "851713", Battery: BatteryContained, BatteryWh: 15}
	r = check(t, Input{Destination: Destination{Country: "JP"}, Mode: Air, Items: []Item{phone}})
	if r.Verdict != Allow || !slices.Contains(r.Requirements, "battery_max_100wh") {
		t.Errorf("phone by air: %+v", r)
	}
	// An e-bike battery over 100 Wh is fully regulated.
	r = check(t, Input{Destination: Destination{Country: "NL"}, Mode: Air, Items: []Item{{SKU: "EB", HSCode: "871160", Battery: BatteryContained, BatteryWh: 500}}})
	if r.Verdict != Uncertain || !slices.Contains(codesOf(r), "DG_LITHIUM_OVER_100WH_AIR") {
		t.Errorf("500 Wh: %s %v", r.Verdict, codesOf(r))
	}
}

func TestPerfumeAndAerosolsByMode(t *testing.T) {
	perfume := Item{SKU: "EDT", HSCode: "330300"}
	r := check(t, Input{Destination: Destination{Country: "GB"}, Mode: Air, Items: []Item{perfume}})
	if r.Verdict == Allow || !needsApproval(r) && r.Verdict != Block {
		t.Errorf("perfume by air must be uncertain or blocked: %+v", r)
	}
	r = check(t, Input{Destination: Destination{Country: "GB"}, Mode: Ground, Items: []Item{perfume}})
	if r.Verdict != Allow || !slices.Contains(r.Requirements, "dg_limited_quantity") {
		t.Errorf("perfume by road: %+v", r)
	}
	aerosol := Item{SKU: "DEO", Category: "aerosol"}
	if r := check(t, Input{Destination: Destination{Country: "AT"}, Mode: Air, Items: []Item{aerosol}}); r.Verdict != Block {
		t.Errorf("aerosol by air: %s", r.Verdict)
	}
	if r := check(t, Input{Destination: Destination{Country: "AT"}, Mode: Ground, Items: []Item{aerosol}}); r.Verdict != Allow {
		t.Errorf("aerosol by road: %s", r.Verdict)
	}
	// Mode defaults to air.
	if r := check(t, Input{Destination: Destination{Country: "AT"}, Items: []Item{aerosol}}); r.Verdict != Block || r.Mode != Air {
		t.Errorf("default mode: %s %s", r.Verdict, r.Mode)
	}
}

func TestDestinationCategoryRules(t *testing.T) {
	cases := []struct {
		country string
		item    Item
		want    Verdict
		code    string
	}{
		{"SA", Item{SKU: "WINE", HSCode: "220421"}, Block, "ALCOHOL_PROHIBITED"},
		{"KW", Item{SKU: "GIN", HSCode: "220850"}, Block, "ALCOHOL_PROHIBITED"},
		{"DE", Item{SKU: "WINE", HSCode: "220421"}, Uncertain, "ALCOHOL_EXCISE_LICENSING"},
		{"AU", Item{SKU: "VAPE", HSCode: "854340"}, Block, "VAPE_PRESCRIPTION_PHARMACY_ONLY"},
		{"SG", Item{SKU: "VAPE", Category: "e_cigarette"}, Block, "VAPE_PROHIBITED"},
		{"FR", Item{SKU: "VAPE", Category: "e_cigarette"}, Uncertain, "VAPE_REGULATED"},
		{"GB", Item{SKU: "KNIFE", HSCode: "821191"}, Uncertain, "BLADE_REMOTE_SALE_RESTRICTED"},
		{"IE", Item{SKU: "KNIFE", HSCode: "821191"}, Allow, "BLADE_AGE_VERIFICATION"},
		{"HK", Item{SKU: "CBD", Category: "cbd"}, Block, "CBD_PROHIBITED"},
		{"IT", Item{SKU: "CBD", Category: "cbd"}, Uncertain, "CBD_LEGAL_STATUS_VARIES"},
		{"US", Item{SKU: "GUN-PART", HSCode: "930599"}, Block, "WEAPONS_LICENCE_REQUIRED"},
		{"IN", Item{SKU: "DRONE", HSCode: "880622"}, Block, "DRONE_IMPORT_PROHIBITED"},
		{"ES", Item{SKU: "DRONE", HSCode: "880622"}, Allow, "DRONE_LOCAL_REGISTRATION"},
		{"AU", Item{SKU: "CIGS", HSCode: "240220"}, Block, "TOBACCO_IMPORT_PERMIT"},
		{"NZ", Item{SKU: "SEEDS", HSCode: "120991"}, Block, "BIOSECURITY_PROHIBITED"},
		{"FR", Item{SKU: "CHEESE", HSCode: "040690"}, Allow, "INTRA_EU_SINGLE_MARKET"},
		{"GB", Item{SKU: "SPRAY", Category: "pepper_spray"}, Block, "PROHIBITED_WEAPON"},
	}
	for _, c := range cases {
		r := check(t, Input{Destination: Destination{Country: c.country}, Mode: Ground, Items: []Item{c.item}})
		if r.Verdict != c.want || !slices.Contains(codesOf(r), c.code) {
			t.Errorf("%s %s: %s %v, want %s %s", c.country, c.item.SKU, r.Verdict, codesOf(r), c.want, c.code)
		}
	}
	r := check(t, Input{Destination: Destination{Country: "GB"}, Items: []Item{{SKU: "KNIFE", HSCode: "821191"}}})
	if !slices.Contains(r.Requirements, "age_verification_18") {
		t.Errorf("GB knife requirements %v", r.Requirements)
	}
}

func TestUnknownClassificationIsUncertain(t *testing.T) {
	for _, it := range []Item{{SKU: "A"}, {SKU: "B", HSCode: "12"}, {SKU: "C", HSCode: "abc"}, {SKU: "D", HSCode: "010121"}} {
		r := check(t, Input{Destination: Destination{Country: "DE"}, Items: []Item{it}})
		if r.Verdict != Uncertain || r.Confidence >= ApprovalThreshold {
			t.Errorf("%+v: %s %.2f", it, r.Verdict, r.Confidence)
		}
	}
}

func TestBasketAggregation(t *testing.T) {
	r := check(t, Input{Destination: Destination{Country: "FR"}, Mode: Air, Items: []Item{tshirt, {SKU: "EDT", HSCode: "330300"}, {SKU: "PB", UNNumber: "3480"}}})
	if r.Verdict != Block || len(r.Items) != 3 || r.Items[0].Verdict != Allow || r.Items[1].Verdict != Uncertain || r.Items[2].Verdict != Block {
		t.Errorf("basket: %+v", r)
	}
	r = check(t, Input{Destination: Destination{Country: "FR"}, Mode: Air, Items: []Item{tshirt, {SKU: "EDT", HSCode: "330300"}}})
	if r.Verdict != Uncertain || r.Confidence != 0.6 {
		t.Errorf("uncertain basket: %s %.2f", r.Verdict, r.Confidence)
	}
}

func TestInvalidInput(t *testing.T) {
	for _, in := range []Input{
		{Destination: Destination{Country: "France"}, Items: []Item{tshirt}},
		{Destination: Destination{Country: "FR"}},
		{Destination: Destination{Country: "FR"}, Mode: "rocket", Items: []Item{tshirt}},
	} {
		if _, err := Check(in); err == nil {
			t.Errorf("accepted %+v", in)
		}
	}
}

func TestRulesetLoads(t *testing.T) {
	rs, err := ruleset()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.categories) < 25 || len(rs.sources) == 0 {
		t.Errorf("categories %d sources %d", len(rs.categories), len(rs.sources))
	}
}

// The rules side of the knife-to-GB and sanctions regression
// (commerce/regressions_test.go): a knife to GB goes to a person; the destination
// check alone blocks sanctioned countries and regions whatever the postal
// code, and lets other destinations through.
func TestKnifeToGBAndSanctionsWithoutAddress(t *testing.T) {
	r := check(t, Input{Destination: Destination{Country: "GB"}, Mode: Ground, Items: []Item{{SKU: "KNIFE", HSCode: "821192"}}})
	if r.Verdict != Uncertain || !needsApproval(r) || !slices.Contains(codesOf(r), "BLADE_REMOTE_SALE_RESTRICTED") {
		t.Errorf("knife to GB: %s %.2f %v", r.Verdict, r.Confidence, codesOf(r))
	}
	for _, d := range []Destination{{Country: "IR"}, {Country: "cu"}, {Country: "RU"}, {Country: "BY"}, {Country: "KP"},
		{Country: "UA", Region: "Crimea"}, {Country: "UA", Region: "UA-40"}, {Country: "UA", City: "Luhansk"}} {
		r, err := CheckDestination(d)
		if err != nil || r.Verdict != Block || len(r.Reasons) == 0 {
			t.Errorf("%+v: %s %v %v", d, r.Verdict, codesOf(r), err)
		}
	}
	for _, d := range []Destination{{Country: "DE"}, {Country: "UA", Region: "Kyiv"}, {Country: "GB", PostalCode: "garbage"}} {
		r, err := CheckDestination(d)
		if err != nil || r.Verdict != Allow || len(r.Reasons) != 0 {
			t.Errorf("%+v: %s %v %v", d, r.Verdict, codesOf(r), err)
		}
	}
	if r, _ := CheckDestination(Destination{Country: "SY"}); r.Verdict != Uncertain {
		t.Errorf("SY: %s", r.Verdict)
	}
	if _, err := CheckDestination(Destination{Country: "Iran"}); err == nil {
		t.Error("a country that is not ISO alpha-2 is invalid input")
	}
}

// ADR special provision 188 covers a Li-ion battery shipped alone of at
// most 100 Wh by road; above 100 Wh, of undeclared energy, or lithium
// metal (limited by grams of lithium, not Wh) it stays fully regulated
// and goes to review, with a message naming that regime only.
func TestStandaloneBatteryRoadRegimes(t *testing.T) {
	de := Destination{Country: "DE"}
	for _, c := range []struct {
		name   string
		item   Item
		want   Verdict
		reason string
	}{
		{"100 Wh", Item{SKU: "B", HSCode: "850760", Battery: BatteryStandalone, BatteryWh: 100}, Allow, "DG_LITHIUM_SP188_ROAD"},
		{"101 Wh", Item{SKU: "B", HSCode: "850760", Battery: BatteryStandalone, BatteryWh: 101}, Uncertain, "DG_LITHIUM_BATTERY_FULLY_REGULATED"},
		{"undeclared Wh", Item{SKU: "B", HSCode: "850760", Battery: BatteryStandalone}, Uncertain, "DG_LITHIUM_BATTERY_FULLY_REGULATED"},
		{"Li-metal", Item{SKU: "B", UNNumber: "UN3090", BatteryWh: 20}, Uncertain, "DG_LITHIUM_BATTERY_FULLY_REGULATED"},
		{"UN3480 by number", Item{SKU: "B", UNNumber: "UN3480", BatteryWh: 74}, Allow, "DG_LITHIUM_SP188_ROAD"},
	} {
		r, err := Check(Input{Destination: de, Mode: Ground, Items: []Item{c.item}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != c.want || len(r.Reasons) != 1 || r.Reasons[0].Code != c.reason {
			t.Errorf("%s: %s %+v", c.name, r.Verdict, r.Reasons)
		}
	}
}

// needsApproval: the verdict goes to support staff at the default
// threshold (docs/approvals.md#confidence-threshold).
func needsApproval(r Result) bool {
	return r.Verdict == Uncertain || (r.Verdict == Allow && r.Confidence < ApprovalThreshold)
}
