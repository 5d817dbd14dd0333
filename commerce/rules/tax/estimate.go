package tax

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

var countryRE = regexp.MustCompile(`^[A-Z]{2}$`)

// engineNotes are the texts of notes the engine adds about its own
// assumptions (regime facts come from data/deminimis.json).
var engineNotes = map[string]string{
	"DOMESTIC_SALE":                      "Domestic sale: no customs; the destination's consumption tax is charged at checkout.",
	"INTRA_EU_OSS":                       "Intra-EU distance sale: no customs; VAT of the destination member state is charged at checkout and declared through the One-Stop Shop (OSS).",
	"DUTY_RATE_REPRESENTATIVE":           "Duty uses a representative rate for the HS chapter, not the binding rate of the full tariff code.",
	"DUTY_RATE_DEFAULT":                  "A line's HS chapter has no representative rate; the tariff's default rate was used.",
	"DUTY_SPECIFIC_NOT_MODELLED":         "A line's chapter carries specific (per litre/kg/pair) or agricultural duties that are not computed.",
	"EXCISE_NOT_MODELLED":                "Excise duties on alcohol and tobacco are not included.",
	"FTA_PREFERENCE_ASSUMED":             "A free-trade preference was applied by country of origin; it requires a valid origin statement on the invoice.",
	"HS_CODE_MISSING":                    "A line has no valid HS code; the default duty rate was used.",
	"FX_INDICATIVE":                      "Thresholds were compared using the built-in indicative exchange rates, not the order's FX table.",
	"US_ADDITIONAL_TARIFFS_NOT_MODELLED": "US duties are MFN general rates only: Section 301, 232 and 122 duties and trade remedies are not included.",
	"US_LOCAL_SALES_TAX_NOT_INCLUDED":    "US sales tax is the state base rate; county, city and district rates are not included, and shipping is treated as non-taxable.",
	"CA_PROVINCIAL_TAX_ON_IMPORT":        "Canada: provincial sales tax (PST/QST/RST) on imports may instead be charged by a registered seller or self-assessed.",
	"DAP_CARRIER_FEES":                   "Under DAP the carrier may add its own customs clearance or disbursement fee on delivery; it is not included.",
	"DE_MINIMIS_ORIGIN_INELIGIBLE":       "A line's origin is excluded from de minimis relief; duty is charged from the first unit of value.",
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
	if _, err := money.Sum(append(values, in.Shipping)...); err != nil {
		return fmt.Errorf("%w: amounts overflow", ErrInvalidInput)
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
	if e.rs, err = e.r.rateSetFor(e.dest, in.Destination.Region, e.at); err != nil {
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
	for _, n := range e.rs.notes {
		e.res.Notes = append(e.res.Notes, n)
	}
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

// toThreshold converts an order-currency amount into the threshold's
// currency, recording which FX source was used.
func (e *estimator) toThreshold(amount int64, to string) (int64, error) {
	if to == e.cur {
		return amount, nil
	}
	if e.in.Convert == nil {
		e.fxSource = "builtin"
		e.addNote("FX_INDICATIVE")
	} else {
		e.fxSource = "caller"
	}
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
	if e.in.Convert == nil {
		e.fxSource = "builtin"
		e.addNote("FX_INDICATIVE")
	} else {
		e.fxSource = "caller"
	}
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
		amt, err := rate.Apply(base)
		if err != nil {
			return err
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
		withShip = false
		e.addNote("US_LOCAL_SALES_TAX_NOT_INCLUDED")
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

// importOrder applies the destination's import regime.
func (e *estimator) importOrder() error {
	th, err := e.r.threshold(e.dest, e.shipFrom, e.at)
	if err != nil {
		return err
	}
	g := th.reg
	e.res.Scheme = th.Scheme
	for _, n := range th.Notes {
		e.res.Notes = append(e.res.Notes, n)
	}
	if e.dest == "US" {
		e.addNote("US_ADDITIONAL_TARIFFS_NOT_MODELLED")
	}
	if e.dest == "CA" && len(e.rs.comps) > 1 {
		e.addNote("CA_PROVINCIAL_TAX_ON_IMPORT")
	}

	// Effective values: Japanese personal imports are valued at 60%.
	eff := make([]int64, len(e.in.Lines))
	var goodsEff int64
	for i, l := range e.in.Lines {
		eff[i] = l.CustomsValue
		if g.factor != nil {
			if eff[i], err = money.MulDiv(l.CustomsValue, g.factor.Num().Int64(), g.factor.Denom().Int64()); err != nil {
				return err
			}
		}
		goodsEff += eff[i]
	}
	thresholdValue := goodsEff
	if g.ThresholdWithShip {
		thresholdValue += e.in.Shipping
	}
	consignment, err := e.toThreshold(thresholdValue, th.Currency)
	if err != nil {
		return err
	}
	excluded := func(i int) bool { return e.chapters[i] != "" && slices.Contains(th.excluded, e.chapters[i]) }
	unitValue := func(i int) (int64, error) {
		u, err := money.MulDiv(e.in.Lines[i].CustomsValue, 1, e.in.Lines[i].Quantity)
		if err != nil {
			return 0, err
		}
		return e.toThreshold(u, th.Currency)
	}

	// --- duty ---
	originOK := true
	for _, l := range e.in.Lines {
		if slices.Contains(th.IneligibleOrigins, strings.ToUpper(l.OriginCountry)) {
			originOK = false
			e.addNote("DE_MINIMIS_ORIGIN_INELIGIBLE")
		}
	}
	relief := make([]bool, len(e.in.Lines))
	for i := range e.in.Lines {
		if !originOK || excluded(i) || th.DutyFreeMax == nil {
			continue
		}
		v := consignment
		if th.DutyBasis == "item" {
			if v, err = unitValue(i); err != nil {
				return err
			}
		}
		relief[i] = within(v, th.DutyFreeMax, th.Strict)
	}
	var flat int64
	if th.FlatDutyPerHS6 != nil {
		if flat, err = e.fromThreshold(*th.FlatDutyPerHS6, th.Currency); err != nil {
			return err
		}
	}
	seenHS6 := map[string]bool{}
	dutyAt := AtBorder
	if e.in.Incoterm == DDP {
		dutyAt = AtCheckout
	}
	for i, l := range e.in.Lines {
		lr := &e.res.Lines[i]
		lr.DutiableValue = eff[i]
		if g.Valuation == "CIF" {
			lr.DutiableValue += e.shares[i]
		}
		switch {
		case relief[i] && th.FlatDutyPerHS6 != nil:
			lr.DutyBasis = basisFlat
			key := fmt.Sprintf("line%d", i)
			if len(e.hs[i]) >= 6 && e.chapters[i] != "" {
				key = e.hs[i][:6]
			}
			if !seenHS6[key] {
				seenHS6[key] = true
				lr.Duty = flat
			}
		case relief[i]:
			lr.DutyBasis = basisDeMinimis
			e.res.DutyDeMinimisApplied = true
		default:
			if e.chapters[i] == "" {
				e.addNote("HS_CODE_MISSING")
			}
			d, err := e.r.lookupDuty(e.dest, strings.ToUpper(l.OriginCountry), e.chapters[i], e.at)
			if err != nil {
				return err
			}
			lr.DutyRate, lr.DutyBasis, lr.Preference = d.rate, d.basis, d.preference
			switch d.basis {
			case basisDefault:
				e.addNote("DUTY_RATE_DEFAULT")
			case basisPreferential:
				e.addNote("FTA_PREFERENCE_ASSUMED")
			default:
				e.addNote("DUTY_RATE_REPRESENTATIVE")
			}
			if d.specific {
				e.addNote("DUTY_SPECIFIC_NOT_MODELLED")
			}
			if lr.Duty, err = d.rate.Apply(lr.DutiableValue); err != nil {
				return err
			}
		}
		if e.chapters[i] == "22" || e.chapters[i] == "24" {
			e.addNote("EXCISE_NOT_MODELLED")
		}
		if lr.Duty > 0 {
			lr.DutyCollectedAt = dutyAt
		}
	}

	// --- tax ---
	borderAt := AtBorder
	if e.in.Incoterm == DDP {
		borderAt = AtCheckout
	}
	var borderLines []int
	for i, l := range e.in.Lines {
		lr := &e.res.Lines[i]
		switch {
		case g.SalesTaxAtCheckout:
			// US: no import VAT; the state's sales tax is charged by the
			// (registered) seller at checkout on the goods.
			if err := e.lineTax(i, l.CustomsValue, AtCheckout); err != nil {
				return err
			}
			e.addNote("US_LOCAL_SALES_TAX_NOT_INCLUDED")
			continue
		case th.CheckoutTaxMax != nil && !excluded(i):
			v := consignment
			if th.CheckoutBasis == "item" {
				if v, err = unitValue(i); err != nil {
					return err
				}
			}
			if within(v, th.CheckoutTaxMax, th.Strict) {
				if err := e.lineTax(i, l.CustomsValue+e.shares[i], AtCheckout); err != nil {
					return err
				}
				continue
			}
		}
		if th.TaxFreeMax != nil && within(consignment, th.TaxFreeMax, th.Strict) {
			e.res.TaxDeMinimisApplied = true
			continue
		}
		base := eff[i] + lr.Duty
		if g.TaxIncludesShipping {
			base += e.shares[i]
		}
		if err := e.lineTax(i, base, borderAt); err != nil {
			return err
		}
		borderLines = append(borderLines, i)
	}
	// Switzerland: a border tax of CHF 5 or less is not collected.
	if th.TaxMinAmount != nil && len(borderLines) > 0 {
		var sum int64
		for _, i := range borderLines {
			sum += e.res.Lines[i].Tax
		}
		inCHF, err := e.toThreshold(sum, th.Currency)
		if err != nil {
			return err
		}
		if inCHF <= *th.TaxMinAmount {
			e.res.TaxDeMinimisApplied = true
			for _, i := range borderLines {
				lr := &e.res.Lines[i]
				for ci := range e.rs.comps {
					amt, _ := e.rs.rateFor(ci, e.hs[i]).Apply(lr.TaxBase)
					e.compSums[ci] -= amt
				}
				lr.Tax, lr.TaxRate, lr.TaxCollectedAt = 0, 0, ""
			}
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
