package commerce

import (
	"slices"

	"github.com/cartwright-dev/cartwright/commerce/rules/address"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Address warnings in the response envelope (stable constants,
// docs/envelope.md#warnings): what the address validator noticed without
// refusing the address.
const (
	// WarnAddressRegionDerived: the region was missing and was taken from
	// the postal code (it matched exactly one region); tax follows it.
	WarnAddressRegionDerived = "address_region_from_postal_code"
	// WarnAddressRegionMismatch: the postal code does not usually belong
	// to the region, where the region does not decide the tax (AU).
	WarnAddressRegionMismatch = "address_region_postal_mismatch"
	// WarnAddressNoCountryRules: no postal rules for the country; only the
	// required fields were checked.
	WarnAddressNoCountryRules = "address_no_country_rules"
	// WarnAddressPostalCodeIgnored: the country uses no postal codes.
	WarnAddressPostalCodeIgnored = "address_postal_code_ignored"
	// WarnAddressOther: any other warning of a replacement validator.
	WarnAddressOther = "address_warning"
)

// addressWarning maps a warning problem to its envelope constant.
func addressWarning(p address.Problem) string {
	switch p.Code {
	case address.CodeRegionDerived:
		return WarnAddressRegionDerived
	case address.CodeRegionMismatch:
		return WarnAddressRegionMismatch
	case address.CodeNoRules:
		return WarnAddressNoCountryRules
	case address.CodeNotUsed:
		return WarnAddressPostalCodeIgnored
	}
	return WarnAddressOther
}

// splitProblems separates errors from warnings (as envelope constants,
// each once).
func splitProblems(problems []address.Problem) (errs []address.Problem, warnings []string) {
	for _, p := range problems {
		if p.Severity != address.SeverityWarning {
			errs = append(errs, p)
			continue
		}
		if w := addressWarning(p); !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	return errs, warnings
}

// checkAddress validates a full shipping address (the draft order ships to
// it) and returns it normalised with its warnings, or ADDRESS_INVALID
// naming every bad field.
func (t *tools) checkAddress(field string, a Address) (Address, []string, error) {
	n, problems := address.Resolve(a)
	errs, warnings := splitProblems(problems)
	return n, warnings, addressError(field, errs)
}

// checkDestination validates an address used only to quote: country,
// region and postal code must be right, but the recipient's name and
// street may be left out (data minimisation: quoting does not need them).
// It returns the normalised address (region code, canonical postal code,
// region derived from the postal code) and the warnings for the envelope.
func (t *tools) checkDestination(field string, a Address) (Address, []string, error) {
	n, problems := address.Resolve(a)
	errs, warnings := splitProblems(problems)
	var keep []address.Problem
	for _, p := range errs {
		street := p.Field == address.FieldName || p.Field == address.FieldLine1 || p.Field == address.FieldCity
		if street && p.Code == address.CodeRequired {
			continue
		}
		keep = append(keep, p)
	}
	return n, warnings, addressError(field, keep)
}

func addressError(field string, problems []address.Problem) error {
	if len(problems) == 0 {
		return nil
	}
	fields := make([]string, 0, len(problems))
	seen := map[string]bool{}
	details := make([]map[string]string, 0, len(problems))
	for _, p := range problems {
		name := field + "." + p.Field
		if !seen[name] {
			seen[name] = true
			fields = append(fields, name)
		}
		details = append(details, map[string]string{"field": name, "code": p.Code, "message": p.Message})
	}
	return toolkit.Errorf(toolkit.AddressInvalid, "address is invalid: %v", fields).
		WithDetail("fields", fields).WithDetail("problems", details).
		WithRecovery("ask the user to correct the named fields")
}
