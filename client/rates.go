package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// How long the client keeps the workers' answer about the exchange rates
// in use (the worker's own read is cached 30 s, commerce.FeedFX), and how
// long one ask may take before a start goes on without it.
const (
	ratesFor      = 30 * time.Second
	ratesUnknown  = 5 * time.Second
	ratesAskLimit = 10 * time.Second
)

// ratesCache is the last answer of a worker about the rates in use.
type ratesCache struct {
	mu    sync.Mutex
	at    time.Time
	known bool
	rates commerce.RatesInUse
}

// checkRates refuses, before anything starts, a currency the exchange
// rates in use do not price (docs/tools.md#exchange-rates): the workers'
// rates (a feed's stored day, or the shipped table when none is
// configured), asked through a short FXRatesInUse run and kept ratesFor,
// and the same check the draft order's first step runs
// (commerce.RatesInUse.CheckCurrency). When the workers cannot say now
// (no rates stored, none fresh, no worker answering in time) it refuses
// nothing and the run's own check answers.
func (c *Client) checkRates(ctx context.Context, currency string) error {
	r, ok := c.ratesInUse(ctx)
	if !ok {
		return nil
	}
	return r.CheckCurrency(currency)
}

// ratesInUse is the cached answer, asked again once it is older than
// ratesFor (ratesUnknown when the workers could not say). One ask at a
// time: concurrent starts wait for it rather than each asking.
func (c *Client) ratesInUse(ctx context.Context) (commerce.RatesInUse, bool) {
	c.rates.mu.Lock()
	defer c.rates.mu.Unlock()
	keep := ratesFor
	if !c.rates.known {
		keep = ratesUnknown
	}
	if !c.rates.at.IsZero() && time.Since(c.rates.at) < keep {
		return c.rates.rates, c.rates.known
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	opts := sdkclient.StartWorkflowOptions{
		ID: "fx-rates-in-use/" + hex.EncodeToString(b), TaskQueue: c.taskQueue, StaticSummary: "exchange rates in use",
		WorkflowRunTimeout: ratesAskLimit,
	}
	var res maintenance.RatesInUseResult
	h, err := c.start(ctx, opts, maintenance.RatesInUseWorkflowName, maintenance.RatesInUseInput{})
	if err == nil {
		err = c.wait(ctx, h.WorkflowID, time.Now().Add(ratesAskLimit), &res)
	}
	c.rates.at = time.Now()
	c.rates.known = err == nil && res.Unavailable == nil && len(res.Currencies) > 0
	c.rates.rates = res.RatesInUse
	return c.rates.rates, c.rates.known
}
