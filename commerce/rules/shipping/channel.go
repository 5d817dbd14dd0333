package shipping

import "fmt"

// Channel is how an international parcel is declared at the destination's
// border. Canada, for one, relieves mail and courier imports under two
// different remission orders with different thresholds
// (commerce/rules/README.md#canada-postal-and-courier-imports).
type Channel string

// Customs channels of a service (customs_channel in the rate cards).
const (
	// ChannelPostal: handed to the destination's postal operator (USPS
	// to Canada Post, Deutsche Post to the local post).
	ChannelPostal Channel = "postal"
	// ChannelCourier: a commercial carrier clears the parcel itself (UPS,
	// DHL Express, Parcelforce globalexpress).
	ChannelCourier Channel = "courier"
)

// ServiceChannel returns the customs channel of a warehouse's service
// ("" origin is DefaultOrigin). The duty tool asks the rate card rather
// than trusting a carrier name in its input.
func ServiceChannel(origin, service string) (Channel, error) {
	if origin == "" {
		origin = DefaultOrigin
	}
	c, err := cardFor(origin)
	if err != nil {
		return "", err
	}
	for _, s := range c.Services {
		if s.Code == service {
			return s.Channel, nil
		}
	}
	return "", fmt.Errorf("%w: service %q from %s", ErrInvalidInput, service, origin)
}
