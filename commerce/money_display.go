package commerce

import (
	"fmt"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// Display is the amount as a person reads it, in major units with the
// currency's decimals: "22.60 EUR", "1999 JPY". Amount is in minor units,
// so printing it bare would show 22.60 EUR as "2260 EUR".
func (m Money) Display() string {
	s, err := money.FormatMajor(m.Amount, m.Currency)
	if err != nil {
		return fmt.Sprintf("%d minor units of %s", m.Amount, m.Currency)
	}
	return s + " " + m.Currency
}
