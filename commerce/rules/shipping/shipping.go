package shipping

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// Mode is the main-leg transport mode of a service in a zone. Dangerous
// goods rules (lithium batteries, aerosols, perfume) depend on it.
type Mode string

// Transport modes.
const (
	ModeAir    Mode = "air"
	ModeGround Mode = "ground"
	ModeSea    Mode = "sea"
)

// Service codes.
const (
	ServiceEconomy  = "economy"
	ServiceStandard = "standard"
	ServiceExpress  = "express"
)

// Item is one order line as shipping sees it: the packed weight and outer
// dimensions of ONE unit, and how many units.
type Item struct {
	SKU         string `json:"sku"`
	Quantity    int64  `json:"quantity"`
	WeightGrams int64  `json:"weight_grams"`
	LengthMM    int64  `json:"length_mm"`
	WidthMM     int64  `json:"width_mm"`
	HeightMM    int64  `json:"height_mm"`
}

// Input asks for the options to ship Items to Country in one parcel.
type Input struct {
	// Country is the destination, ISO 3166-1 alpha-2.
	Country string `json:"country"`
	Items   []Item `json:"items"`
	// Modes, when not empty, keeps only options whose mode is listed (e.g.
	// ground only, after compliance ruled out air for a lithium battery).
	Modes []Mode `json:"modes,omitempty"`
	// Origin is the warehouse country the parcel leaves from (see
	// Origins); "" is DefaultOrigin.
	Origin string `json:"origin,omitempty"`
}

// Option is one way to ship the parcel.
type Option struct {
	// Service is economy, standard or express.
	Service string `json:"service"`
	Name    string `json:"name"`
	Carrier string `json:"carrier"`
	// Channel is how the parcel is declared at a foreign border: postal
	// or courier (some thresholds depend on it, e.g. Canada's).
	Channel Channel `json:"customs_channel"`
	Zone    string  `json:"zone"`
	Mode    Mode    `json:"mode"`
	// Origin is the warehouse country the option ships from.
	Origin string `json:"origin"`
	// Cost is in minor units of Currency (the rate card's: EUR from DE,
	// USD from US, GBP from GB).
	Cost     int64  `json:"cost"`
	Currency string `json:"currency"`
	// ActualGrams, DimensionalGrams and ChargeableGrams describe the parcel;
	// chargeable = max(actual, dimensional). BandMaxGrams is the upper
	// bound of the weight band that priced it.
	ActualGrams      int64 `json:"actual_grams"`
	DimensionalGrams int64 `json:"dimensional_grams"`
	ChargeableGrams  int64 `json:"chargeable_grams"`
	BandMaxGrams     int64 `json:"band_max_grams"`
	// MinDays and MaxDays estimate delivery in business days.
	MinDays        int    `json:"min_days"`
	MaxDays        int    `json:"max_days"`
	RulesetVersion string `json:"ruleset_version"`
}

// Errors of Quote. Wrap-checked with errors.Is.
var (
	// ErrInvalidInput: missing items, non-positive quantity or size.
	ErrInvalidInput = errors.New("shipping: invalid input")
	// ErrUnknownDestination: the country is not an ISO alpha-2 code.
	ErrUnknownDestination = errors.New("shipping: unknown destination")
	// ErrNotServed: embargoed destination or carriers suspended service.
	ErrNotServed = errors.New("shipping: destination not served")
	// ErrNoService: the parcel exceeds every service's weight or size limit
	// (or the mode filter left nothing).
	ErrNoService = errors.New("shipping: no service can carry this parcel")
	// ErrUnknownOrigin: no warehouse (rate card) in that country.
	ErrUnknownOrigin = errors.New("shipping: no warehouse at that origin")
)

// Sanity caps on one unit: anything larger is a data error, and the caps
// keep every product below int64 overflow.
const (
	maxUnitGrams = 1_000_000 // 1 t
	maxUnitMM    = 10_000    // 10 m
	maxQuantity  = 100_000
)

var countryRE = regexp.MustCompile(`^[A-Z]{2}$`)

// dimDivisorMM3PerGram: 5000 cm³/kg = 5,000,000 mm³ / 1000 g.
const dimDivisorMM3PerGram = 5000

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// Parcel is the single parcel an order is packed into.
type Parcel struct {
	ActualGrams int64
	VolumeMM3   int64
	// LongestMM is the longest side of any one unit: the box is at least
	// that long.
	LongestMM int64
}

// DimensionalGrams is the parcel's volumetric weight.
func (p Parcel) DimensionalGrams() int64 { return ceilDiv(p.VolumeMM3, dimDivisorMM3PerGram) }

// ChargeableGrams is max(actual, dimensional).
func (p Parcel) ChargeableGrams() int64 { return max(p.ActualGrams, p.DimensionalGrams()) }

// Pack combines the items into one parcel: weights add up, volumes add up
// (no packing efficiency is assumed, so dimensional weight is what the
// units' own boxes would cost), and the longest unit side bounds the box.
func Pack(items []Item) (Parcel, error) {
	if len(items) == 0 {
		return Parcel{}, fmt.Errorf("%w: no items", ErrInvalidInput)
	}
	var p Parcel
	for i, it := range items {
		if it.Quantity <= 0 || it.Quantity > maxQuantity {
			return Parcel{}, fmt.Errorf("%w: item %d quantity out of range", ErrInvalidInput, i)
		}
		if it.WeightGrams <= 0 || it.WeightGrams > maxUnitGrams {
			return Parcel{}, fmt.Errorf("%w: item %d weight out of range", ErrInvalidInput, i)
		}
		for _, d := range []int64{it.LengthMM, it.WidthMM, it.HeightMM} {
			if d <= 0 || d > maxUnitMM {
				return Parcel{}, fmt.Errorf("%w: item %d dimensions out of range", ErrInvalidInput, i)
			}
		}
		var err error
		if p.ActualGrams, err = money.Add(p.ActualGrams, it.WeightGrams*it.Quantity); err != nil {
			return Parcel{}, fmt.Errorf("%w: weight overflows", ErrInvalidInput)
		}
		vol, err := money.MulDiv(it.LengthMM*it.WidthMM, it.HeightMM*it.Quantity, 1)
		if err != nil {
			return Parcel{}, fmt.Errorf("%w: volume overflows", ErrInvalidInput)
		}
		if p.VolumeMM3, err = money.Add(p.VolumeMM3, vol); err != nil {
			return Parcel{}, fmt.Errorf("%w: volume overflows", ErrInvalidInput)
		}
		p.LongestMM = max(p.LongestMM, it.LengthMM, it.WidthMM, it.HeightMM)
	}
	return p, nil
}

// Quote returns the shipping options for the order, cheapest first (ties
// by service code). Services whose limits the parcel exceeds are left out;
// if none remains the error is ErrNoService.
func Quote(in Input) ([]Option, error) {
	origin := strings.ToUpper(strings.TrimSpace(in.Origin))
	if origin == "" {
		origin = DefaultOrigin
	}
	rc, err := cardFor(origin)
	if err != nil {
		return nil, err
	}
	country := strings.ToUpper(strings.TrimSpace(in.Country))
	if !countryRE.MatchString(country) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownDestination, in.Country)
	}
	if why, ok := rc.NotServed[country]; ok {
		return nil, fmt.Errorf("%w: %s: %s", ErrNotServed, country, why)
	}
	parcel, err := Pack(in.Items)
	if err != nil {
		return nil, err
	}
	zone := rc.zoneOf(country)
	var out []Option
	for _, s := range rc.Services {
		if parcel.ActualGrams > s.MaxGrams || parcel.LongestMM > s.MaxLengthMM || parcel.VolumeMM3 > s.MaxVolumeMM3 {
			continue
		}
		zr, ok := s.Zones[zone]
		if !ok || (len(in.Modes) > 0 && !containsMode(in.Modes, zr.Mode)) {
			continue
		}
		charge := parcel.ChargeableGrams()
		b, ok := zr.band(charge)
		if !ok {
			continue // dimensional weight above the top band
		}
		out = append(out, Option{
			Service: s.Code, Name: s.Name, Carrier: s.Carrier, Channel: s.Channel, Zone: zone, Mode: zr.Mode, Origin: origin,
			Cost: b.cost, Currency: rc.Currency,
			ActualGrams: parcel.ActualGrams, DimensionalGrams: parcel.DimensionalGrams(),
			ChargeableGrams: charge, BandMaxGrams: b.MaxGrams,
			MinDays: zr.MinDays, MaxDays: zr.MaxDays, RulesetVersion: rc.RulesetVersion,
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %d g actual, %d g dimensional, longest side %d mm", ErrNoService, parcel.ActualGrams, parcel.DimensionalGrams(), parcel.LongestMM)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Cost != out[j].Cost {
			return out[i].Cost < out[j].Cost
		}
		return out[i].Service < out[j].Service
	})
	return out, nil
}

func containsMode(ms []Mode, m Mode) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// Origins lists the warehouse countries with a rate card, sorted.
func Origins() []string {
	cards, err := rateCards()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(cards))
	for o := range cards {
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}

// RulesetVersion is the rate card's version, e.g. "shipping-2026.11.2".
func RulesetVersion() string {
	rc, err := rateCard()
	if err != nil {
		return ""
	}
	return rc.RulesetVersion
}

// Services lists the service codes of the rate card (economy, standard,
// express), in rate-card order.
func Services() []string {
	rc, err := rateCard()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(rc.Services))
	for _, s := range rc.Services {
		out = append(out, s.Code)
	}
	return out
}
