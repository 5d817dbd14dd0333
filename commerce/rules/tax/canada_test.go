package tax

import (
	"slices"
	"testing"
)

// Canada's low-value relief as the CBSA publishes it
// (commerce/rules/README.md#canada-postal-and-courier-imports):
//   - mail from any country, and courier from countries other than the US
//     and Mexico: duty and taxes relieved at a value for duty of CAD 20 or
//     less (Postal / Courier Imports Remission Orders;
//     https://www.cbsa-asfc.gc.ca/publications/dm-md/d8/d8-2-2-eng.html);
//   - courier from the US or Mexico: duty relieved up to CAD 150, taxes up
//     to CAD 40 (Courier Imports Remission Order s. 4.1;
//     https://www.cbsa-asfc.gc.ca/publications/dm-md/d8/d8-2-16-eng.html),
//     by place of direct shipment, not by the goods' origin
//     (https://www.cbsa-asfc.gc.ca/publications/cn-ad/cn20-18-eng.html);
//     mail from the US keeps CAD 20 (same notice, paragraph 2);
//   - above the relief, the CUSMA tariff rate (0) needs CUSMA-originating
//     goods shipped from a party; other goods pay the MFN rate (T-shirts,
//     HS 6109: 18 %).
//
// Ontario: HST 13 % on the duty-paid value; shipping is outside both bases.
func TestCanadaPostalAndCourier(t *testing.T) {
	shirt := func(cad int64, origin string) Line {
		return Line{SKU: "TEE", HSCode: "6109.10", OriginCountry: origin, CustomsValue: cad, Quantity: 1}
	}
	wine := Line{SKU: "WINE", HSCode: "2204.21", OriginCountry: "US", CustomsValue: 3000, Quantity: 1}
	cases := []struct {
		name      string
		from      string
		channel   Channel
		line      Line
		duty, tax int64
		// dutyRelief / taxRelief: the de minimis flags.
		dutyRelief, taxRelief bool
		preference            string
		notes                 []string
	}{
		// Courier from the US: a shirt made in Bangladesh is relieved like
		// any other goods imported from the US (CN 20-18).
		{"US courier BD CAD 30", "US", ChannelCourier, shirt(3000, "BD"), 0, 0, true, true, "", []string{"CA_CUSMA_COURIER", "CHANNEL_COURIER"}},
		{"US courier BD CAD 40.00", "US", ChannelCourier, shirt(4000, "BD"), 0, 0, true, true, "", nil},
		{"US courier BD CAD 40.01", "US", ChannelCourier, shirt(4001, "BD"), 0, 520, true, false, "", nil},
		{"US courier BD CAD 100", "US", ChannelCourier, shirt(10000, "BD"), 0, 1300, true, false, "", nil},
		{"US courier BD CAD 150.00", "US", ChannelCourier, shirt(15000, "BD"), 0, 1950, true, false, "", nil},
		// Above CAD 150 a non-originating shirt pays the MFN 18 %: 36.00
		// duty, HST 13 % of 236.00 = 30.68.
		{"US courier BD CAD 200", "US", ChannelCourier, shirt(20000, "BD"), 3600, 3068, false, false, "", []string{"DUTY_RATE_REPRESENTATIVE"}},
		// ... a CUSMA-originating one gets the CUSMA rate 0; HST on 200.
		{"US courier US-made CAD 200", "US", ChannelCourier, shirt(20000, "US"), 0, 2600, false, false, "USMCA/CUSMA", []string{"FTA_PREFERENCE_ASSUMED"}},
		{"MX courier BD CAD 100", "MX", ChannelCourier, shirt(10000, "BD"), 0, 1300, true, false, "", nil},
		// USPS (mail) from the US: CAD 20 for duty and taxes.
		{"US postal BD CAD 15", "US", ChannelPostal, shirt(1500, "BD"), 0, 0, true, true, "", []string{"CA_LVS", "CHANNEL_POSTAL"}},
		{"US postal BD CAD 30", "US", ChannelPostal, shirt(3000, "BD"), 540, 460, false, false, "", []string{"CHANNEL_POSTAL"}},
		{"US postal US-made CAD 30", "US", ChannelPostal, shirt(3000, "US"), 0, 390, false, false, "USMCA/CUSMA", nil},
		// A channel not given never gets the courier thresholds.
		{"US unknown channel BD CAD 30", "US", "", shirt(3000, "BD"), 540, 460, false, false, "", []string{"CHANNEL_UNKNOWN"}},
		// Courier from Germany: CAD 20, whatever the carrier.
		{"DE courier BD CAD 30", "DE", ChannelCourier, shirt(3000, "BD"), 540, 460, false, false, "", nil},
		// A US-made shirt from the German warehouse has left North
		// America: no CUSMA rate (direct transport), MFN 18 %.
		{"DE courier US-made CAD 200", "DE", ChannelCourier, shirt(20000, "US"), 3600, 3068, false, false, "", []string{"FTA_NOT_DIRECT"}},
		// Alcoholic beverages are outside both remission orders.
		{"US courier wine CAD 30", "US", ChannelCourier, wine, 0, 390, false, false, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := est(t, Input{Destination: Destination{Country: "CA", Region: "ON"}, ShipFrom: c.from, Channel: c.channel,
				Currency: "CAD", Lines: []Line{c.line}, Shipping: 1000, Incoterm: DAP})
			if r.Duty != c.duty || r.Tax != c.tax {
				t.Errorf("duty %d tax %d, want %d and %d", r.Duty, r.Tax, c.duty, c.tax)
			}
			if r.DutyDeMinimisApplied != c.dutyRelief || r.TaxDeMinimisApplied != c.taxRelief {
				t.Errorf("relief duty %v tax %v, want %v and %v", r.DutyDeMinimisApplied, r.TaxDeMinimisApplied, c.dutyRelief, c.taxRelief)
			}
			if r.Lines[0].Preference != c.preference {
				t.Errorf("preference %q, want %q", r.Lines[0].Preference, c.preference)
			}
			var codes []string
			for _, n := range r.Notes {
				codes = append(codes, n.Code)
			}
			for _, n := range c.notes {
				if !slices.Contains(codes, n) {
					t.Errorf("notes %v lack %s", codes, n)
				}
			}
			if c.channel == ChannelPostal && slices.Contains(codes, "CA_CUSMA_COURIER") {
				t.Errorf("a postal parcel cites the courier thresholds: %v", codes)
			}
		})
	}
}
