package tax

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

var countryRE = regexp.MustCompile(`^[A-Z]{2}$`)

// MaxOrderAmount bounds goods plus shipping, in minor units (10^15: ten
// trillion euros, or 10^15 yen). It keeps every intermediate sum (value +
// shipping + duty, times a rate) far from int64 overflow.
const MaxOrderAmount = 1_000_000_000_000_000

// engineNotes are the texts of notes the engine adds about its own
// assumptions (regime facts come from data/deminimis.json).
var engineNotes = map[string]string{
	"DOMESTIC_SALE":                        "Domestic sale: no customs; the destination's consumption tax is charged at checkout.",
	"INTRA_EU_OSS":                         "Intra-EU distance sale: no customs; VAT of the destination member state is charged at checkout and declared through the One-Stop Shop (OSS).",
	"DUTY_RATE_REPRESENTATIVE":             "Duty uses a representative rate for the HS chapter, not the binding rate of the full tariff code.",
	"DUTY_RATE_DEFAULT":                    "A line's HS chapter has no representative rate; the tariff's default rate was used.",
	"DUTY_SPECIFIC_NOT_MODELLED":           "A line's chapter carries specific (per litre/kg/pair) or agricultural duties that are not computed.",
	"EXCISE_NOT_MODELLED":                  "Excise duties on alcohol and tobacco are not included.",
	"FTA_PREFERENCE_ASSUMED":               "A free-trade preference was applied by country of origin; it requires a valid origin statement on the invoice.",
	"HS_CODE_MISSING":                      "A line has no valid HS code; the default duty rate was used.",
	"FX_INDICATIVE":                        "Thresholds were compared using the built-in indicative exchange rates, not the order's FX table.",
	"US_ADDITIONAL_TARIFFS_NOT_MODELLED":   "US duties are MFN general rates only: Section 301, 232 and 122 duties and trade remedies are not included.",
	"US_LOCAL_SALES_TAX_NOT_MODELLED":      "US sales tax: the local (county, city, district) rates of this address are not modelled; the tax is the state's rate alone and the real tax is likely higher.",
	"US_SHIPPING_TAXABILITY_NOT_MODELLED":  "US sales tax: whether this state taxes the shipping charge is not modelled; shipping was left untaxed.",
	"CA_PROVINCIAL_TAX_ON_IMPORT":          "Canada: provincial sales tax (PST/QST/RST) on imports may instead be charged by a registered seller or self-assessed.",
	"DAP_CARRIER_FEES":                     "Under DAP the carrier may add its own customs clearance or disbursement fee on delivery; it is not included.",
	"CHANNEL_POSTAL":                       "The parcel is declared as a postal import (the service hands it to the destination's postal operator); the thresholds for mail apply.",
	"CHANNEL_COURIER":                      "The parcel is declared as a courier import (a commercial carrier clears it); the thresholds for courier shipments apply.",
	"CHANNEL_UNKNOWN":                      "The customs channel (postal or courier) was not given; only the thresholds that hold for both were applied.",
	"FTA_NOT_DIRECT":                       "A line's origin has a free-trade agreement with the destination, but the parcel ships from a country outside it; the preference needs direct transport from a party, so the general rate applies.",
	"SCHEME_TAX_BASE_INCLUDES_DUTY":        "The tax charged at checkout under the low-value scheme is on the price the customer pays the seller: goods, transport and the duty the seller charges with them (VAT Directive 2006/112/EC art. 73 and 78(a); the same base as import VAT at the border, art. 86(1)).",
	"SCHEME_TAX_BASE_EXCLUDES_BORDER_DUTY": "The tax charged at checkout under the low-value scheme is on goods and transport only: under DAP the customer pays the duty to customs on delivery, so it is not part of the seller's price (VAT Directive 2006/112/EC art. 73 and 78(a)).",
	"DE_MINIMIS_ORIGIN_INELIGIBLE":         "A line's origin is excluded from de minimis relief; duty is charged from the first unit of value.",
}

// estimator carries the state of one Estimate call.
type estimator struct {
	r        *rules
	in       Input
	cur      string
	dest     string
	shipFrom string
	at       time.Time
	conv     ThresholdConverter
	fxSource string
	rs       rateSet
	res      Result
	hs       []string // normalised HS per line
	chapters []string
	shares   []int64
	compSums []int64
}

// Estimate computes the duty and tax of an order. See the package doc for
// the model; Result.Notes lists every assumption that shaped the answer.
func Estimate(in Input) (Result, error) {
	r, err := load()
	if err != nil {
		return Result{}, err
	}
	e := &estimator{r: r, in: in}
	if err := e.prepare(); err != nil {
		return Result{}, err
	}
	switch {
	case e.shipFrom == e.dest:
		e.res.Regime = RegimeDomestic
		e.addNote("DOMESTIC_SALE")
		err = e.noCustoms()
	case r.eu[e.shipFrom] && r.eu[e.dest]:
		e.res.Regime = RegimeIntraEU
		e.addNote("INTRA_EU_OSS")
		err = e.noCustoms()
	default:
		e.res.Regime = RegimeImport
		err = e.importOrder()
	}
	if err != nil {
		return Result{}, err
	}
	if err := e.totals(); err != nil {
		return Result{}, err
	}
	return e.res, nil
}

// prepare validates the input and resolves rates, dates and shares.
func (e *estimator) prepare() error {
	in := e.in
	e.cur = strings.ToUpper(strings.TrimSpace(in.Currency))
	if !money.Known(e.cur) {
		return fmt.Errorf("%w: currency %q", ErrInvalidInput, in.Currency)
	}
	e.dest = strings.ToUpper(strings.TrimSpace(in.Destination.Country))
	if !countryRE.MatchString(e.dest) {
		return fmt.Errorf("%w: destination country %q", ErrInvalidInput, in.Destination.Country)
	}
	e.shipFrom = strings.ToUpper(strings.TrimSpace(in.ShipFrom))
	if e.shipFrom == "" {
		e.shipFrom = DefaultShipFrom
	}
	if !countryRE.MatchString(e.shipFrom) {
		return fmt.Errorf("%w: ship-from country %q", ErrInvalidInput, in.ShipFrom)
	}
	if in.Incoterm != DDP && in.Incoterm != DAP {
		return fmt.Errorf("%w: incoterm %q (want DDP or DAP)", ErrInvalidInput, in.Incoterm)
	}
	if len(in.Lines) == 0 {
		return fmt.Errorf("%w: no lines", ErrInvalidInput)
	}
	if in.Shipping < 0 {
		return fmt.Errorf("%w: negative shipping", ErrInvalidInput)
	}
	values := make([]int64, len(in.Lines))
	for i, l := range in.Lines {
		if l.Quantity < 1 || l.CustomsValue < 0 {
			return fmt.Errorf("%w: line %d needs quantity ≥ 1 and a non-negative value", ErrInvalidInput, i)
		}
		values[i] = l.CustomsValue
		e.hs = append(e.hs, normHS(l.HSCode))
		e.chapters = append(e.chapters, chapterOf(e.hs[i]))
	}
	if sum, err := money.Sum(append(values, in.Shipping)...); err != nil || sum > MaxOrderAmount {
		return fmt.Errorf("%w: order value above %d minor units", ErrInvalidInput, int64(MaxOrderAmount))
	}
	e.at = in.At.UTC()
	if in.At.IsZero() {
		e.at = time.Now().UTC()
	}
	e.conv = in.Convert
	if e.conv == nil {
		e.conv = BuiltinConverter()
	}
	var err error
	if e.rs, err = e.r.rateSetFor(e.dest, in.Destination.Region, in.Destination.PostalCode, e.at); err != nil {
		return err
	}
	if e.shares, err = money.Allocate(in.Shipping, values); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	e.compSums = make([]int64, len(e.rs.comps))
	e.res = Result{
		Currency: e.cur, Incoterm: in.Incoterm, TaxName: e.rs.taxName, TaxRate: e.rs.total(),
		RulesetVersion: e.r.version, Lines: make([]LineResult, len(in.Lines)),
	}
	for i, l := range in.Lines {
		e.res.Lines[i] = LineResult{SKU: l.SKU, HSCode: l.HSCode, Chapter: e.chapters[i], CustomsValue: l.CustomsValue, ShippingShare: e.shares[i], DutyBasis: basisNoImport}
	}
	e.res.Notes = append(e.res.Notes, e.rs.notes...)
	return nil
}

func (e *estimator) addNote(code string) {
	for _, n := range e.res.Notes {
		if n.Code == code {
			return
		}
	}
	text, ok := engineNotes[code]
	if !ok {
		text = e.r.notes[code]
	}
	e.res.Notes = append(e.res.Notes, Note{Code: code, Message: text})
}

// addExemptionNote notes an exemption that relieved a line, once.
func (e *estimator) addExemptionNote(x *exemption) {
	for _, n := range e.res.Notes {
		if n.Code == x.Code {
			return
		}
	}
	e.res.Notes = append(e.res.Notes, Note{Code: x.Code, Message: x.Note + " (" + x.Law + ")"})
}

// useFX records which FX source a conversion uses: the caller's, or the
// built-in table, whose rates the result notes as indicative.
func (e *estimator) useFX() {
	if e.in.Convert == nil {
		e.fxSource = "builtin"
		e.addNote("FX_INDICATIVE")
	} else {
		e.fxSource = "caller"
	}
}

// toThreshold converts an order-currency amount into the threshold's
// currency, recording which FX source was used.
func (e *estimator) toThreshold(amount int64, to string) (int64, error) {
	if to == e.cur {
		return amount, nil
	}
	e.useFX()
	v, err := e.conv(amount, e.cur, to)
	if err != nil {
		return 0, fmt.Errorf("tax: converting %s to %s for a threshold: %w", e.cur, to, err)
	}
	return v, nil
}

// fromThreshold converts a threshold-currency amount into the order's.
func (e *estimator) fromThreshold(amount int64, from string) (int64, error) {
	if from == e.cur {
		return amount, nil
	}
	e.useFX()
	v, err := e.conv(amount, from, e.cur)
	if err != nil {
		return 0, fmt.Errorf("tax: converting %s to %s: %w", from, e.cur, err)
	}
	return v, nil
}

// lineTax applies every component to base, rounding per component.
func (e *estimator) lineTax(i int, base int64, at Collection) error {
	l := &e.res.Lines[i]
	l.TaxBase = base
	l.TaxCollectedAt = at
	var total int64
	for ci := range e.rs.comps {
		rate := e.rs.rateFor(ci, e.hs[i])
		taxed, x, err := e.taxable(ci, i, base)
		if err != nil {
			return err
		}
		if x != nil {
			e.addExemptionNote(x)
		}
		amt, err := rate.Apply(taxed)
		if err != nil {
			return err
		}
		if taxed == 0 && x != nil {
			continue // exempt: the component does not apply to the line
		}
		l.TaxRate += rate
		total += amt
		e.compSums[ci] += amt
	}
	l.Tax = total
	if total == 0 {
		l.TaxCollectedAt = ""
	}
	return nil
}

// noCustoms handles domestic and intra-EU sales: tax at checkout on goods
// plus shipping (US: goods only).
func (e *estimator) noCustoms() error {
	withShip := true
	if g, err := e.r.regimeFor(e.dest); err == nil && g.SalesTaxAtCheckout {
		withShip = e.rs.shipTaxed()
	}
	for i, l := range e.in.Lines {
		base := l.CustomsValue
		if withShip {
			base += e.shares[i]
		}
		if err := e.lineTax(i, base, AtCheckout); err != nil {
			return err
		}
	}
	return nil
}

// totals sums the lines into the result.
func (e *estimator) totals() error {
	res := &e.res
	for i := range res.Lines {
		l := res.Lines[i]
		var err error
		if res.Duty, err = money.Add(res.Duty, l.Duty); err != nil {
			return err
		}
		if res.Tax, err = money.Add(res.Tax, l.Tax); err != nil {
			return err
		}
		for _, part := range []struct {
			amt int64
			at  Collection
		}{{l.Duty, l.DutyCollectedAt}, {l.Tax, l.TaxCollectedAt}} {
			if part.amt == 0 {
				continue
			}
			if part.at == AtCheckout {
				res.ChargedAtCheckout += part.amt
			} else {
				res.PayableOnDelivery += part.amt
			}
		}
		res.DutyCollectedAt = merge(res.DutyCollectedAt, l.DutyCollectedAt)
		res.TaxCollectedAt = merge(res.TaxCollectedAt, l.TaxCollectedAt)
	}
	res.Total = res.Duty + res.Tax
	res.CollectedAt = AtCheckout
	if res.PayableOnDelivery > 0 {
		res.CollectedAt = AtBorder
		e.addNote("DAP_CARRIER_FEES")
	}
	res.DeMinimisApplied = res.DutyDeMinimisApplied || res.TaxDeMinimisApplied
	for ci, c := range e.rs.comps {
		res.TaxComponents = append(res.TaxComponents, Component{Name: c.Name, Rate: c.Rate, Amount: e.compSums[ci]})
	}
	res.FXSource = e.fxSource
	for _, nm := range e.rs.notModelled {
		res.NotModelled = append(res.NotModelled, nm)
		switch nm {
		case NotModelledLocalRate:
			e.addNote("US_LOCAL_SALES_TAX_NOT_MODELLED")
		case NotModelledShipping:
			e.addNote("US_SHIPPING_TAXABILITY_NOT_MODELLED")
		}
	}
	return nil
}

// merge folds collection points: border wins, so a non-empty "border"
// tells the buyer something is due on delivery.
func merge(a, b Collection) Collection {
	if a == AtBorder || b == AtBorder {
		return AtBorder
	}
	if a == AtCheckout || b == AtCheckout {
		return AtCheckout
	}
	return ""
}
