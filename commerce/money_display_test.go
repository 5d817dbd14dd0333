package commerce

import "testing"

func TestMoneyDisplayIsMajorUnits(t *testing.T) {
	for m, want := range map[Money]string{
		{Amount: 2260, Currency: "EUR"}: "22.60 EUR",
		{Amount: 1999, Currency: "JPY"}: "1999 JPY",
		{Amount: 5, Currency: "XXZ"}:    "5 minor units of XXZ",
	} {
		if got := m.Display(); got != want {
			t.Errorf("%+v.Display() = %q, want %q", m, got, want)
		}
	}
}
