package tax

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// importCtx is what the duty and tax steps of an import share.
type importCtx struct {
	th *Threshold
	g  *regime
	// eff are the line values customs applies rates to (60% for Japanese
	// personal imports); consignment is the order's value in the
	// threshold currency.
	eff         []int64
	consignment int64
	// schemeUsed is set when a line's tax was charged at checkout under
	// the regime's low-value scheme.
	schemeUsed bool
}

// excluded reports whether line i's HS code starts with one of the
// regime's excluded prefixes (a chapter such as "22" or a heading such as
// "4202"): excise goods, VOEC exclusions, Japan's small-value exclusions
// get no duty relief, no tax relief and no checkout collection.
func (c *importCtx) excluded(e *estimator, i int) bool {
	if e.chapters[i] == "" {
		return false
	}
	return slices.ContainsFunc(c.th.excluded, func(p string) bool { return strings.HasPrefix(e.hs[i], p) })
}

// unitValue is line i's value per unit in the threshold currency.
func (c *importCtx) unitValue(e *estimator, i int) (int64, error) {
	u, err := money.MulDiv(e.in.Lines[i].CustomsValue, 1, e.in.Lines[i].Quantity)
	if err != nil {
		return 0, err
	}
	return e.toThreshold(u, c.th.Currency)
}

// importOrder applies the destination's import regime: duty first, since
// import taxes are charged on the duty-paid value.
func (e *estimator) importOrder() error {
	th, err := e.r.threshold(e.dest, e.shipFrom, e.in.Channel, e.at)
	if err != nil {
		return err
	}
	g := th.reg
	e.res.Notes = append(e.res.Notes, th.Notes...)
	if th.ChannelBound {
		switch e.in.Channel {
		case ChannelPostal:
			e.addNote("CHANNEL_POSTAL")
		case ChannelCourier:
			e.addNote("CHANNEL_COURIER")
		default:
			e.addNote("CHANNEL_UNKNOWN")
		}
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
	c := &importCtx{th: &th, g: g, eff: eff, consignment: consignment}
	if err := e.importDuty(c); err != nil {
		return err
	}
	if err := e.importTax(c); err != nil {
		return err
	}
	// The scheme is named only when it carried a line: an AUD 1,774 item
	// is above the AU-LVG threshold and pays GST at the border, so the
	// answer must not claim the low-value scheme.
	if c.schemeUsed {
		e.res.Scheme = th.Scheme
	}
	return nil
}

// importDuty computes each line's duty: de minimis relief, the EU flat
// duty, or the chapter rate (zero under a free-trade preference).
func (e *estimator) importDuty(c *importCtx) error {
	th, g, eff, consignment := c.th, c.g, c.eff, c.consignment
	var err error
	originOK := true
	for _, l := range e.in.Lines {
		if slices.Contains(th.IneligibleOrigins, strings.ToUpper(l.OriginCountry)) {
			originOK = false
			e.addNote("DE_MINIMIS_ORIGIN_INELIGIBLE")
		}
	}
	relief := make([]bool, len(e.in.Lines))
	for i := range e.in.Lines {
		if !originOK || c.excluded(e, i) || th.DutyFreeMax == nil {
			continue
		}
		v := consignment
		if th.DutyBasis == "item" {
			if v, err = c.unitValue(e, i); err != nil {
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
			d, err := e.r.lookupDuty(e.dest, strings.ToUpper(l.OriginCountry), e.shipFrom, e.chapters[i], e.at)
			if err != nil {
				return err
			}
			if d.notDirect {
				e.addNote("FTA_NOT_DIRECT")
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
	return nil
}

// importTax computes each line's consumption tax: at checkout under a
// low-value scheme (or US sales tax), relieved under a tax threshold, else
// at the border on the duty-paid value.
func (e *estimator) importTax(c *importCtx) error {
	th, g, eff, consignment := c.th, c.g, c.eff, c.consignment
	var err error
	borderAt := AtBorder
	if e.in.Incoterm == DDP {
		borderAt = AtCheckout
	}
	var borderLines []int
	for i, l := range e.in.Lines {
		lr := &e.res.Lines[i]
		switch {
		case g.SalesTaxAtCheckout:
			// US: no import VAT; the destination's sales tax is charged by
			// the (registered) seller at checkout on the goods, and on
			// their shipping where the state taxes it (local.go).
			base := l.CustomsValue
			if e.rs.shipTaxed() {
				base += e.shares[i]
			}
			if err := e.lineTax(i, base, AtCheckout); err != nil {
				return err
			}
			continue
		case th.CheckoutTaxMax != nil && !c.excluded(e, i):
			v := consignment
			if th.CheckoutBasis == "item" {
				if v, err = c.unitValue(e, i); err != nil {
					return err
				}
			}
			if within(v, th.CheckoutTaxMax, th.Strict) {
				if err := e.lineTax(i, e.checkoutBase(i), AtCheckout); err != nil {
					return err
				}
				c.schemeUsed = true
				continue
			}
		}
		if th.TaxFreeMax != nil && !c.excluded(e, i) && within(consignment, th.TaxFreeMax, th.Strict) {
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

// checkoutBase is line i's tax base when the seller charges the tax at
// checkout under a low-value scheme: what the customer pays the seller for
// the line (VAT Directive art. 73, 78(a)): its value, its share of
// transport and, when the seller charges it too (DDP), its duty, so the
// base is the one the border would use (art. 86(1): value + duty +
// transport). Under DAP the customer pays the duty to customs on delivery;
// it is not part of the seller's price (commerce/rules/README.md#eu-low-value-imports).
func (e *estimator) checkoutBase(i int) int64 {
	lr := &e.res.Lines[i]
	base := e.in.Lines[i].CustomsValue + e.shares[i]
	switch {
	case lr.Duty > 0 && lr.DutyCollectedAt == AtCheckout:
		e.addNote("SCHEME_TAX_BASE_INCLUDES_DUTY")
		return base + lr.Duty
	case lr.Duty > 0:
		e.addNote("SCHEME_TAX_BASE_EXCLUDES_BORDER_DUTY")
	}
	return base
}
