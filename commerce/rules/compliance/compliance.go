package compliance

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Verdict is the outcome of a check.
type Verdict string

// Verdicts, in increasing severity.
const (
	Allow     Verdict = "allow"
	Uncertain Verdict = "uncertain"
	Block     Verdict = "block"
)

func (v Verdict) severity() int {
	switch v {
	case Allow:
		return 0
	case Uncertain:
		return 1
	case Block:
		return 2
	}
	return -1
}

// Mode is the transport mode of the main leg.
type Mode string

// Transport modes.
const (
	Air    Mode = "air"
	Ground Mode = "ground"
	Sea    Mode = "sea"
)

// Battery says how a lithium battery travels with an item.
type Battery string

// Battery declarations. Empty means "not declared": the HS code decides.
const (
	BatteryNone       Battery = "none"
	BatteryContained  Battery = "contained"   // UN3481/UN3091 contained in equipment
	BatteryPackedWith Battery = "packed_with" // UN3481/UN3091 packed with equipment
	BatteryStandalone Battery = "standalone"  // UN3480/UN3090
)

// ApprovalThreshold is the confidence below which a verdict needs a human
// (docs/approvals.md#confidence-threshold); allow rules are never below it,
// uncertain always is.
const ApprovalThreshold = 0.80

// Destination is where the parcel goes.
type Destination struct {
	// Country is ISO 3166-1 alpha-2.
	Country string `json:"country"`
	// Region is an ISO 3166-2 code or a name ("UA-43", "Crimea").
	Region string `json:"region,omitempty"`
	// City and PostalCode help recognise sanctioned regions.
	City       string `json:"city,omitempty"`
	PostalCode string `json:"postal_code,omitempty"`
}

// Item is one product to check.
type Item struct {
	SKU   string `json:"sku"`
	Title string `json:"title,omitempty"`
	// HSCode is the Harmonized System code, 4 to 10 digits (dots and
	// spaces are ignored).
	HSCode string `json:"hs_code,omitempty"`
	// Category, when set to a known category id (see Categories), wins
	// over the HS code.
	Category string `json:"category,omitempty"`
	// UNNumber is the dangerous-goods UN number if the item is one
	// ("UN3480", "UN1266").
	UNNumber string `json:"un_number,omitempty"`
	// Battery and BatteryWh declare a lithium battery (Wh per battery).
	Battery   Battery `json:"battery,omitempty"`
	BatteryWh int64   `json:"battery_wh,omitempty"`
	// OriginCountry is the ISO country of origin.
	OriginCountry string `json:"origin_country,omitempty"`
}

// Input is one compliance question.
type Input struct {
	Destination Destination `json:"destination"`
	// Mode defaults to air, the strictest for dangerous goods.
	Mode  Mode   `json:"mode,omitempty"`
	Items []Item `json:"items"`
}

// Reason is one rule that fired.
type Reason struct {
	// Code is stable (e.g. "DG_LITHIUM_ION_STANDALONE_AIR").
	Code       string  `json:"code"`
	Verdict    Verdict `json:"verdict"`
	Confidence float64 `json:"confidence"`
	Message    string  `json:"message"`
	// SKU is empty for destination-level reasons.
	SKU      string `json:"sku,omitempty"`
	Category string `json:"category,omitempty"`
	// Source is the public reference of the rule, when it has one.
	Source string `json:"source,omitempty"`
}

// ItemResult is the verdict on one item.
type ItemResult struct {
	SKU      string `json:"sku"`
	Category string `json:"category"`
	// CategorySource says how the category was found: "declared",
	// "un_number", "battery", "hs_code" or "unknown".
	CategorySource string   `json:"category_source"`
	Verdict        Verdict  `json:"verdict"`
	Confidence     float64  `json:"confidence"`
	Reasons        []Reason `json:"reasons"`
	Requirements   []string `json:"requirements,omitempty"`
}

// Result is the verdict on the whole basket: the strictest verdict wins;
// a block carries the highest blocking confidence, anything else the
// lowest confidence among the reasons at that verdict.
type Result struct {
	Verdict    Verdict  `json:"verdict"`
	Confidence float64  `json:"confidence"`
	Reasons    []Reason `json:"reasons"`
	// Requirements are conditions of an allow ("age_verification_18",
	// "dg_limited_quantity", "battery_max_100wh", ...), sorted.
	Requirements   []string     `json:"requirements,omitempty"`
	Items          []ItemResult `json:"items"`
	Mode           Mode         `json:"mode"`
	RulesetVersion string       `json:"ruleset_version"`
}

// Stable reason codes the engine itself emits (the data adds its own).
const (
	ReasonUnknownCategory = "UNKNOWN_CATEGORY"
	ReasonUnknownHSCode   = "UNKNOWN_HS_CODE"
	ReasonNoRestriction   = "NO_RESTRICTION"
)

// ErrInvalidInput is wrapped by errors about malformed input.
var ErrInvalidInput = errors.New("compliance: invalid input")

var (
	countryRE = regexp.MustCompile(`^[A-Z]{2}$`)
	hsRE      = regexp.MustCompile(`^[0-9]{4,10}$`)
)

// Check evaluates the items for the destination and mode.
func Check(in Input) (Result, error) {
	rs, err := ruleset()
	if err != nil {
		return Result{}, err
	}
	country := strings.ToUpper(strings.TrimSpace(in.Destination.Country))
	if !countryRE.MatchString(country) {
		return Result{}, fmt.Errorf("%w: destination country %q", ErrInvalidInput, in.Destination.Country)
	}
	mode := in.Mode
	if mode == "" {
		mode = Air
	}
	if mode != Air && mode != Ground && mode != Sea {
		return Result{}, fmt.Errorf("%w: mode %q", ErrInvalidInput, in.Mode)
	}
	if len(in.Items) == 0 {
		return Result{}, fmt.Errorf("%w: no items", ErrInvalidInput)
	}
	dest := in.Destination
	dest.Country = country

	res := Result{Mode: mode, RulesetVersion: rs.version}
	res.Reasons = append(res.Reasons, rs.destinationReasons(dest)...)
	for _, it := range in.Items {
		ir := rs.checkItem(it, country, mode)
		res.Items = append(res.Items, ir)
		res.Reasons = append(res.Reasons, ir.Reasons...)
		res.Requirements = append(res.Requirements, ir.Requirements...)
	}
	res.Verdict, res.Confidence = aggregate(res.Reasons)
	res.Requirements = uniqueSorted(res.Requirements)
	return res, nil
}

// aggregate folds reasons into a verdict and confidence.
func aggregate(reasons []Reason) (Verdict, float64) {
	v := Allow
	for _, r := range reasons {
		if r.Verdict.severity() > v.severity() {
			v = r.Verdict
		}
	}
	conf := -1.0
	for _, r := range reasons {
		if r.Verdict != v {
			continue
		}
		switch {
		case conf < 0:
			conf = r.Confidence
		case v == Block:
			conf = max(conf, r.Confidence)
		default:
			conf = min(conf, r.Confidence)
		}
	}
	if conf < 0 {
		conf = 1
	}
	return v, conf
}

func uniqueSorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	sort.Strings(s)
	out := s[:1]
	for _, x := range s[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// normHS strips dots and spaces from an HS code.
func normHS(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' || r == '-' {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
}

// checkItem resolves the item's categories and applies their rules.
func (rs *rules) checkItem(it Item, country string, mode Mode) ItemResult {
	ir := ItemResult{SKU: it.SKU}
	cat, src, reasons := rs.classify(it)
	ir.Category, ir.CategorySource = cat, src
	ir.Reasons = append(ir.Reasons, reasons...)
	cats := []string{}
	if cat != "" {
		cats = append(cats, cat)
	}
	// A declared battery adds its own category to the product's (a drone
	// is a drone and a device with a battery).
	bc := batteryCategory(it)
	// A Li-ion battery of at most 100 Wh shipped alone is its own
	// category (ADR special provision 188 by road), never also the fully
	// regulated one: the answer names one regime, not both.
	if sp188(it) {
		if cat == "lithium_battery_standalone" || cat == "" {
			cats = []string{"lithium_battery_standalone_sp188"}
		}
		bc = "lithium_battery_standalone_sp188"
	}
	if bc != "" && !slices.Contains(cats, bc) {
		cats = append(cats, bc)
	}
	for _, c := range cats {
		rule := rs.rule(c, country, mode)
		ir.Reasons = append(ir.Reasons, Reason{
			Code: rule.Reason, Verdict: rule.Verdict, Confidence: rule.Confidence,
			Message: rule.Message, SKU: it.SKU, Category: c, Source: rule.Source,
		})
		ir.Requirements = append(ir.Requirements, rule.Requirements...)
	}
	if o := strings.ToUpper(strings.TrimSpace(it.OriginCountry)); o != "" {
		if rule, ok := rs.origins[o]; ok {
			ir.Reasons = append(ir.Reasons, Reason{Code: rule.Reason, Verdict: rule.Verdict, Confidence: rule.Confidence, Message: rule.Message, SKU: it.SKU, Source: rule.Source})
		}
	}
	ir.Verdict, ir.Confidence = aggregate(ir.Reasons)
	ir.Requirements = uniqueSorted(ir.Requirements)
	return ir
}

// sp188 reports whether the item is a lithium-ion battery shipped alone
// whose declared energy is at most 100 Wh: ADR special provision 188
// excepts it by road (with the lithium battery mark). A Li-metal battery
// (UN3090) is limited by lithium content, not Wh, and is never one.
func sp188(it Item) bool {
	un := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(it.UNNumber), " ", ""))
	if un == "UN3090" || un == "3090" || it.BatteryWh <= 0 || it.BatteryWh > 100 {
		return false
	}
	return it.Battery == BatteryStandalone || un == "UN3480" || un == "3480"
}

// batteryCategory maps a declared battery to its category; a battery over
// 100 Wh in or with equipment is fully regulated.
func batteryCategory(it Item) string {
	switch it.Battery {
	case BatteryStandalone:
		return "lithium_battery_standalone"
	case BatteryContained, BatteryPackedWith:
		if it.BatteryWh > 100 {
			return "lithium_battery_large"
		}
		if it.Battery == BatteryContained {
			return "lithium_battery_in_equipment"
		}
		return "lithium_battery_with_equipment"
	}
	return ""
}

// classify finds the item's product category: declared category, then UN
// number, then the longest matching HS prefix. A declared "no battery"
// turns an HS-inferred battery-device category into plain electronics.
func (rs *rules) classify(it Item) (string, string, []Reason) {
	if c := strings.TrimSpace(it.Category); c != "" {
		if _, ok := rs.categories[c]; ok {
			return c, "declared", nil
		}
	}
	if un := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(it.UNNumber), " ", "")); un != "" {
		if !strings.HasPrefix(un, "UN") {
			un = "UN" + un
		}
		if c, ok := rs.byUN[un]; ok {
			if c == "lithium_battery_in_equipment" && it.Battery == BatteryPackedWith {
				c = "lithium_battery_with_equipment"
			}
			return c, "un_number", nil
		}
	}
	if it.Battery != "" && it.Battery != BatteryNone && batteryCategory(it) != "" && strings.TrimSpace(it.HSCode) == "" {
		return batteryCategory(it), "battery", nil
	}
	hs := normHS(it.HSCode)
	var unknown []Reason
	if strings.TrimSpace(it.Category) != "" {
		unknown = append(unknown, Reason{Code: ReasonUnknownCategory, Verdict: Uncertain, Confidence: 0.5, Message: "the declared category is not one the rules know; classified by HS code instead", SKU: it.SKU})
	}
	if !hsRE.MatchString(hs) {
		return "", "unknown", append(unknown, Reason{Code: ReasonUnknownHSCode, Verdict: Uncertain, Confidence: 0.4, Message: "no valid HS code (4-10 digits) and no known category: the item cannot be classified", SKU: it.SKU})
	}
	for n := min(len(hs), 6); n >= 2; n-- {
		if c, ok := rs.byHS[hs[:n]]; ok {
			if it.Battery == BatteryNone && strings.HasPrefix(c, "lithium_battery_in") {
				c = "electronics"
			}
			return c, "hs_code", unknown
		}
	}
	return "", "unknown", append(unknown, Reason{Code: ReasonUnknownHSCode, Verdict: Uncertain, Confidence: 0.5, Message: "the HS chapter has no compliance rule here; needs classification", SKU: it.SKU})
}
