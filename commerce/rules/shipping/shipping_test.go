package shipping

import (
	"errors"
	"testing"
)

func TestDimensionalWeight(t *testing.T) {
	// 40×30×20 cm = 24,000 cm³ / 5000 = 4.8 kg.
	if g := (Parcel{VolumeMM3: 400 * 300 * 200}).DimensionalGrams(); g != 4800 {
		t.Errorf("40x30x20 cm = %d g, want 4800", g)
	}
	// 10×10×10 cm = 1000 cm³ / 5000 = 0.2 kg.
	if g := (Parcel{VolumeMM3: 100 * 100 * 100}).DimensionalGrams(); g != 200 {
		t.Errorf("10x10x10 cm = %d g, want 200", g)
	}
	// Rounds up to the gram: 1 mm³ → 1 g.
	if g := (Parcel{VolumeMM3: 1}).DimensionalGrams(); g != 1 {
		t.Errorf("1 mm³ = %d g", g)
	}
}

func TestChargeableWeightUsesDimensionalWhenBulky(t *testing.T) {
	// A light, bulky pillow: 500 g in a 50×40×30 cm box = 12 kg volumetric.
	opts, err := Quote(Input{Country: "FR", Items: []Item{{SKU: "pillow", Quantity: 1, WeightGrams: 500, LengthMM: 500, WidthMM: 400, HeightMM: 300}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		if o.ActualGrams != 500 || o.DimensionalGrams != 12000 || o.ChargeableGrams != 12000 || o.BandMaxGrams != 20000 {
			t.Errorf("%s: %+v", o.Service, o)
		}
	}
}

func TestQuoteServicesZonesAndCosts(t *testing.T) {
	tshirt := []Item{{SKU: "tee", Quantity: 2, WeightGrams: 180, LengthMM: 300, WidthMM: 250, HeightMM: 20}}
	opts, err := Quote(Input{Country: "us", Items: tshirt})
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 3 {
		t.Fatalf("want economy, standard, express; got %+v", opts)
	}
	want := map[string]int64{ServiceEconomy: 2299, ServiceStandard: 3499, ServiceExpress: 6990}
	for i, o := range opts {
		if o.Zone != "NA" || o.Mode != ModeAir || o.Currency != "EUR" || o.Cost != want[o.Service] || o.RulesetVersion != "shipping-2026.11.3" {
			t.Errorf("option %+v", o)
		}
		if o.MinDays <= 0 || o.MaxDays < o.MinDays {
			t.Errorf("days %+v", o)
		}
		if i > 0 && opts[i-1].Cost > o.Cost {
			t.Error("not sorted by cost")
		}
	}
	// Domestic and EU go by ground except express abroad.
	opts, _ = Quote(Input{Country: "DE", Items: tshirt})
	for _, o := range opts {
		if o.Zone != "DE" || o.Mode != ModeGround {
			t.Errorf("DE option %+v", o)
		}
	}
	for country, zone := range map[string]string{"GB": "EUR3", "BR": "ROW"} {
		opts, err := Quote(Input{Country: country, Items: tshirt})
		if err != nil || opts[0].Zone != zone {
			t.Errorf("%s: %v %+v, want zone %s", country, err, opts, zone)
		}
	}
	if rc, err := rateCard(); err != nil || rc.Origin.Country != "DE" {
		t.Errorf("default origin: %v", err)
	}
}

func TestModeFilter(t *testing.T) {
	items := []Item{{SKU: "x", Quantity: 1, WeightGrams: 1000, LengthMM: 100, WidthMM: 100, HeightMM: 100}}
	opts, err := Quote(Input{Country: "IT", Items: items, Modes: []Mode{ModeGround}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		if o.Mode != ModeGround {
			t.Errorf("air option kept: %+v", o)
		}
	}
	if len(opts) != 2 {
		t.Errorf("IT ground options: %d", len(opts))
	}
	if _, err := Quote(Input{Country: "JP", Items: items, Modes: []Mode{ModeGround}}); !errors.Is(err, ErrNoService) {
		t.Errorf("JP ground only: %v", err)
	}
}

func TestLimitsAndErrors(t *testing.T) {
	heavy := []Item{{SKU: "anvil", Quantity: 1, WeightGrams: 40000, LengthMM: 400, WidthMM: 300, HeightMM: 300}}
	opts, err := Quote(Input{Country: "AT", Items: heavy})
	if err != nil || len(opts) != 1 || opts[0].Service != ServiceExpress || opts[0].BandMaxGrams != 50000 {
		t.Errorf("40 kg: %+v %v", opts, err)
	}
	tooHeavy := []Item{{SKU: "x", Quantity: 1, WeightGrams: 80000, LengthMM: 400, WidthMM: 300, HeightMM: 300}}
	if _, err := Quote(Input{Country: "AT", Items: tooHeavy}); !errors.Is(err, ErrNoService) {
		t.Errorf("80 kg: %v", err)
	}
	tooLong := []Item{{SKU: "ski", Quantity: 1, WeightGrams: 2000, LengthMM: 1900, WidthMM: 100, HeightMM: 50}}
	if _, err := Quote(Input{Country: "AT", Items: tooLong}); !errors.Is(err, ErrNoService) {
		t.Errorf("190 cm: %v", err)
	}
	for _, cc := range []string{"CU", "IR", "KP", "RU", "BY", "SY"} {
		if _, err := Quote(Input{Country: cc, Items: heavy}); !errors.Is(err, ErrNotServed) {
			t.Errorf("%s: %v", cc, err)
		}
	}
	if _, err := Quote(Input{Country: "Germany", Items: heavy}); !errors.Is(err, ErrUnknownDestination) {
		t.Errorf("bad country: %v", err)
	}
	bad := [][]Item{nil, {{Quantity: 0, WeightGrams: 1, LengthMM: 1, WidthMM: 1, HeightMM: 1}}, {{Quantity: 1, WeightGrams: -1, LengthMM: 1, WidthMM: 1, HeightMM: 1}}, {{Quantity: 1, WeightGrams: 1, LengthMM: 0, WidthMM: 1, HeightMM: 1}}}
	for _, items := range bad {
		if _, err := Quote(Input{Country: "DE", Items: items}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%+v: %v", items, err)
		}
	}
}

func TestRateCardLoads(t *testing.T) {
	// loadCard refuses a card without sources.
	if RulesetVersion() != "shipping-2026.11.3" {
		t.Fatalf("version %q", RulesetVersion())
	}
	if _, err := rateCard(); err != nil {
		t.Fatal(err)
	}
}

// Warehouses in DE, US and GB: each origin has its own zones, currency
// and modes; an unknown origin is refused; embargoes hold from every one.
func TestOriginsHaveTheirOwnCards(t *testing.T) {
	if got := Origins(); len(got) != 3 || got[0] != "DE" || got[1] != "GB" || got[2] != "US" {
		t.Fatalf("origins %v", got)
	}
	tee := []Item{{SKU: "TEE", Quantity: 1, WeightGrams: 180, LengthMM: 300, WidthMM: 250, HeightMM: 20}}
	for _, c := range []struct {
		origin, dest, zone, currency string
		economyMode                  Mode
	}{
		{"", "FR", "EU1", "EUR", ModeGround},
		{"US", "US", "US", "USD", ModeGround},
		{"US", "CA", "CAMX", "USD", ModeGround},
		{"US", "DE", "EUR", "USD", ModeAir},
		{"GB", "GB", "GB", "GBP", ModeGround},
		{"gb", "FR", "EU", "GBP", ModeGround},
		{"GB", "JP", "APAC", "GBP", ModeAir},
	} {
		opts, err := Quote(Input{Origin: c.origin, Country: c.dest, Items: tee})
		if err != nil || len(opts) != 3 {
			t.Fatalf("%s→%s: %v %v", c.origin, c.dest, opts, err)
		}
		for _, o := range opts {
			if o.Zone != c.zone || o.Currency != c.currency || o.Origin == "" || o.Cost <= 0 {
				t.Errorf("%s→%s: %+v", c.origin, c.dest, o)
			}
			if o.Service == ServiceEconomy && o.Mode != c.economyMode {
				t.Errorf("%s→%s economy by %s", c.origin, c.dest, o.Mode)
			}
		}
	}
	if _, err := Quote(Input{Origin: "FR", Country: "DE", Items: tee}); !errors.Is(err, ErrUnknownOrigin) {
		t.Errorf("origin FR: %v", err)
	}
	for _, o := range Origins() {
		for _, cc := range []string{"IR", "CU", "KP", "RU", "BY", "SY"} {
			if _, err := Quote(Input{Origin: o, Country: cc, Items: tee}); !errors.Is(err, ErrNotServed) {
				t.Errorf("%s→%s: %v", o, cc, err)
			}
		}
	}
}
