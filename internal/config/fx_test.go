package config

import (
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
)

// The exchange-rate settings (docs/operators.md#exchange-rates): no feed
// by default (the shipped table prices), and values that would make every
// price stale, or fetch something that is not a web feed, are refused at
// start.
func TestFXSettings(t *testing.T) {
	c, err := Defaults()
	if err != nil || c.FXFeedURL != "" || c.FXMaxAge != 120*time.Hour || c.FXFetchEvery != time.Hour {
		t.Fatalf("defaults: %v %+v", err, c)
	}
	with := func(k, v string) error {
		_, err := parse(env.Options{Environment: map[string]string{k: v}})
		return err
	}
	if err := with("CARTWRIGHT_FX_FEED_URL", "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"CARTWRIGHT_FX_FEED_URL":    "file:///etc/passwd",
		"CARTWRIGHT_FX_MAX_AGE":     "10m",
		"CARTWRIGHT_FX_FETCH_EVERY": "5s",
	} {
		if err := with(k, v); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
}
