package commerce

import "testing"

// The FX table is ECB data: pin a few published reference rates so an edit
// of the file is a deliberate new version, not a silent change.
func TestBuiltinFXIsTheECBTable(t *testing.T) {
	fx, err := BuiltinFX()
	if err != nil {
		t.Fatal(err)
	}
	if fx.Version() != "fx-ecb-2024-12-31" {
		t.Fatalf("version %s", fx.Version())
	}
	for cur, want := range map[string]string{"USD": "1.0389", "JPY": "163.06", "GBP": "0.82918", "CHF": "0.9412"} {
		if got := fx.rates[cur].FloatString(5); got[:len(want)] != want {
			t.Errorf("%s = %s, want %s", cur, got, want)
		}
	}
	// Round trip through the base rounds once at the end.
	m, err := fx.Convert(Money{Amount: 13500, Currency: "EUR"}, "JPY")
	if err != nil || m.Amount != 22013 {
		t.Fatalf("EUR 135.00 → %v %v, want ¥22,013", m, err)
	}
	if _, err := fx.Convert(Money{Amount: 1, Currency: "EUR"}, "XOF"); err == nil {
		t.Fatal("XOF has no rate and must be refused")
	}
}
