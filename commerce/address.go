package commerce

import (
	"github.com/cartwright-dev/cartwright/commerce/rules/address"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// AddressValidator checks addresses. The built-in one applies the rule data
// of commerce/rules/address; an address-verification service can replace
// it. Validate returns the normalised address and the error-severity
// problems (empty when valid).
type AddressValidator interface {
	Validate(a Address) (Address, []address.Problem)
}

// RulesAddressValidator is the built-in AddressValidator.
type RulesAddressValidator struct{}

// Validate implements AddressValidator.
func (RulesAddressValidator) Validate(a Address) (Address, []address.Problem) {
	n := address.Normalize(toRulesAddress(a))
	var errs []address.Problem
	for _, p := range address.Validate(n) {
		if p.Severity == address.SeverityError {
			errs = append(errs, p)
		}
	}
	return fromRulesAddress(n), errs
}

func toRulesAddress(a Address) address.Address {
	return address.Address{Name: a.Name, Line1: a.Line1, Line2: a.Line2, City: a.City,
		Region: a.Region, PostalCode: a.PostalCode, Country: a.Country}
}

func fromRulesAddress(a address.Address) Address {
	return Address{Name: a.Name, Line1: a.Line1, Line2: a.Line2, City: a.City,
		Region: a.Region, PostalCode: a.PostalCode, Country: a.Country}
}

// checkAddress validates a full shipping address (the draft order ships to
// it) and returns it normalised, or ADDRESS_INVALID naming every bad field.
func (t *tools) checkAddress(field string, a Address) (Address, error) {
	n, problems := t.addresses.Validate(a)
	return n, addressError(field, problems)
}

// checkDestination validates an address used only to quote: country,
// region and postal code must be right, but the recipient's name and
// street may be left out (data minimisation: quoting does not need them).
// It returns the normalised address (region code, canonical postal code).
func (t *tools) checkDestination(field string, a Address) (Address, error) {
	n, problems := t.addresses.Validate(a)
	var keep []address.Problem
	for _, p := range problems {
		street := p.Field == address.FieldName || p.Field == address.FieldLine1 || p.Field == address.FieldCity
		if street && p.Code == address.CodeRequired {
			continue
		}
		keep = append(keep, p)
	}
	return n, addressError(field, keep)
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
