package commerce

// ChooseOption is the index of the shipping option a draft order takes:
// the one of the requested service level, else the cheapest; -1 when
// there is no option. The draft-order workflow and its quote-round local
// activity both choose with it, so they cannot disagree.
func ChooseOption(options []ShippingOption, service string) int {
	best := -1
	for i, o := range options {
		if o.ServiceLevel == service {
			return i
		}
		if best < 0 || o.Cost.Amount < options[best].Cost.Amount {
			best = i
		}
	}
	return best
}
