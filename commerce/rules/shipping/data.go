package shipping

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

//go:embed data/*.json
var dataFS embed.FS

type card struct {
	RulesetVersion string   `json:"ruleset_version"`
	AsOf           string   `json:"as_of"`
	Sources        []string `json:"sources"`
	Origin         struct {
		Country     string `json:"country"`
		Description string `json:"description"`
	} `json:"origin"`
	Currency   string            `json:"currency"`
	DimDivisor int64             `json:"dim_divisor_cm3_per_kg"`
	NotServed  map[string]string `json:"not_served"`
	Zones      map[string]struct {
		Name      string   `json:"name"`
		Countries []string `json:"countries"`
	} `json:"zones"`
	Services []service `json:"services"`

	countryZone map[string]string
	fallback    string
}

type service struct {
	Code         string              `json:"code"`
	Name         string              `json:"name"`
	Carrier      string              `json:"carrier"`
	Channel      Channel             `json:"customs_channel"`
	MaxGrams     int64               `json:"max_grams"`
	MaxLengthMM  int64               `json:"max_length_mm"`
	MaxVolumeMM3 int64               `json:"max_volume_mm3"`
	Zones        map[string]zoneRate `json:"zones"`
}

type zoneRate struct {
	Mode    Mode   `json:"mode"`
	MinDays int    `json:"min_days"`
	MaxDays int    `json:"max_days"`
	Bands   []band `json:"bands"`
}

type band struct {
	MaxGrams int64  `json:"max_grams"`
	Price    string `json:"price"`
	cost     int64
}

// band returns the first band whose upper bound holds the weight.
func (z zoneRate) band(grams int64) (band, bool) {
	for _, b := range z.Bands {
		if grams <= b.MaxGrams {
			return b, true
		}
	}
	return band{}, false
}

func (c *card) zoneOf(country string) string {
	if z, ok := c.countryZone[country]; ok {
		return z
	}
	return c.fallback
}

// DefaultOrigin is the warehouse an Input without Origin ships from: the
// original EU warehouse (data/rates.json).
const DefaultOrigin = "DE"

// rateCards loads one card per warehouse (data/rates*.json), keyed by
// origin country; all share one ruleset version.
var rateCards = sync.OnceValues(func() (map[string]*card, error) {
	names, err := fs.Glob(dataFS, "data/rates*.json")
	if err != nil {
		return nil, err
	}
	cards := map[string]*card{}
	version := ""
	for _, name := range names {
		c, err := loadCard(name)
		if err != nil {
			return nil, err
		}
		if version != "" && c.RulesetVersion != version {
			return nil, fmt.Errorf("shipping: %s has version %s, others %s", name, c.RulesetVersion, version)
		}
		version = c.RulesetVersion
		if _, dup := cards[c.Origin.Country]; dup || !countryRE.MatchString(c.Origin.Country) {
			return nil, fmt.Errorf("shipping: %s: origin %q missing or repeated", name, c.Origin.Country)
		}
		if !money.Known(c.Currency) {
			return nil, fmt.Errorf("shipping: %s: currency %q", name, c.Currency)
		}
		cards[c.Origin.Country] = c
	}
	if cards[DefaultOrigin] == nil {
		return nil, fmt.Errorf("shipping: no rate card for the default origin %s", DefaultOrigin)
	}
	return cards, nil
})

// rateCard is the default origin's card.
func rateCard() (*card, error) { return cardFor(DefaultOrigin) }

// cardFor returns the rate card of a warehouse, or ErrUnknownOrigin.
func cardFor(origin string) (*card, error) {
	cards, err := rateCards()
	if err != nil {
		return nil, err
	}
	c, ok := cards[origin]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownOrigin, origin)
	}
	return c, nil
}

func loadCard(name string) (*card, error) {
	raw, err := dataFS.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var c card
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("shipping: %s: %w", name, err)
	}
	if !strings.HasPrefix(c.RulesetVersion, "shipping-") || len(c.Sources) == 0 {
		return nil, fmt.Errorf("shipping: data lacks ruleset_version or sources")
	}
	if c.DimDivisor != 5000 {
		// The code's dimensional formula is fixed at 5000 cm³/kg; a data
		// change must come with a code change.
		return nil, fmt.Errorf("shipping: dim divisor %d, code assumes 5000", c.DimDivisor)
	}
	c.countryZone = map[string]string{}
	for code, z := range c.Zones {
		for _, cc := range z.Countries {
			if cc == "*" {
				c.fallback = code
				continue
			}
			if prev, dup := c.countryZone[cc]; dup {
				return nil, fmt.Errorf("shipping: %s in zones %s and %s", cc, prev, code)
			}
			c.countryZone[cc] = code
		}
	}
	if c.fallback == "" {
		return nil, fmt.Errorf("shipping: no fallback zone")
	}
	for si := range c.Services {
		s := &c.Services[si]
		for zc, zr := range s.Zones {
			if _, ok := c.Zones[zc]; !ok {
				return nil, fmt.Errorf("shipping: %s prices unknown zone %s", s.Code, zc)
			}
			if zr.MinDays <= 0 || zr.MaxDays < zr.MinDays {
				return nil, fmt.Errorf("shipping: %s/%s bad delivery days", s.Code, zc)
			}
			var prevMax, prevCost int64
			for bi := range zr.Bands {
				b := &zr.Bands[bi]
				if b.cost, err = money.ParseMajor(b.Price, c.Currency); err != nil {
					return nil, fmt.Errorf("shipping: %s/%s: %w", s.Code, zc, err)
				}
				// Bands must rise in weight and never get cheaper.
				if b.MaxGrams <= prevMax || b.cost < prevCost {
					return nil, fmt.Errorf("shipping: %s/%s bands not increasing at %d g", s.Code, zc, b.MaxGrams)
				}
				prevMax, prevCost = b.MaxGrams, b.cost
			}
			if prevMax < s.MaxGrams {
				return nil, fmt.Errorf("shipping: %s/%s bands stop at %d g below the service limit", s.Code, zc, prevMax)
			}
			s.Zones[zc] = zr
		}
		if s.Channel != ChannelPostal && s.Channel != ChannelCourier {
			return nil, fmt.Errorf("shipping: %s: customs_channel %q (want postal or courier)", s.Code, s.Channel)
		}
		if len(s.Zones) != len(c.Zones) {
			return nil, fmt.Errorf("shipping: %s does not price every zone", s.Code)
		}
	}
	return &c, nil
}
