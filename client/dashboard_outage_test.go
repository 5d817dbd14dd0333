package client_test

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// TestDashboardWaitsOutAStripeOutage (docs/errors.md#outages), a fault
// test: Stripe answers 503 (the switch in front of stripe-mock) when the
// merchant asks for the Express Dashboard, and stays down past the login
// link's own retries (three attempts, about a second). The request is not
// dropped: it stays pending, the call runs again after the outage backoff
// (a fourth request reaches the switch while it is still down), and once
// Stripe is back the merchant's login link is made — one link.
func TestDashboardWaitsOutAStripeOutage(t *testing.T) {
	sw := testenv.NewStripeSwitch(t)
	s := wiringtest.StartWith(t, wiringtest.Options{Configure: func(c *config.Config) { c.StripeAPIBase = sw.URL }})
	s.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	opts, err := client.OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	suffix := hex.EncodeToString([]byte(key("x")))[:8]
	m := "m_outage_" + suffix
	testenv.AdminExec(t, s.Pool, `INSERT INTO merchants (merchant_id, stripe_account_id, display_name, country, business_type, onboarding_status)
		VALUES ($1, $2, 'Outage Test Shop', 'GB', 'company', 'in_progress')`, m, "acct_1CwOutage"+suffix)
	h, err := c.StartOnboarding(ctx, onboardingflow.Input{MerchantID: m})
	if err != nil {
		t.Fatal(err)
	}
	s.TerminateLater(t, h.WorkflowID)
	// stripe-mock's account has requirements due: the run waits for the
	// merchant, with its relink made.
	awaitOnboarding(ctx, t, c, m, "waiting for the merchant", func(st onboardingflow.Status) bool {
		return st.State == onboardingflow.StateAwaitingMerchant
	})

	sw.Down(true)
	if err := c.Dashboard(ctx, m); err != nil {
		t.Fatal(err)
	}
	// Past the tool's own three attempts: a fourth request can only come
	// from the call run again after the outage backoff.
	awaitCond(ctx, t, "a login link request after the tool's retries", func() bool {
		refused, _ := sw.Counts("/login_links")
		return refused >= 4
	})
	if st, err := c.OnboardingStatus(ctx, m); err != nil || st.PendingDashboard != 1 || len(st.Logins) != 0 {
		t.Fatalf("during the outage: pending %d, logins %d, %v; want the request pending", st.PendingDashboard, len(st.Logins), err)
	}
	sw.Down(false)
	st := awaitOnboarding(ctx, t, c, m, "the login link after the outage", func(st onboardingflow.Status) bool {
		return len(st.Logins) == 1 && st.PendingDashboard == 0
	})
	if _, made := sw.Counts("/login_links"); made != 1 || st.Logins[0].SnapshotID == "" {
		t.Fatalf("%d login links made, login %+v; want one, evidenced", made, st.Logins[0])
	}
}

// awaitOnboarding polls the onboarding's status until ok, or fails at ctx's
// deadline.
func awaitOnboarding(ctx context.Context, t *testing.T, c *client.Client, m, what string, ok func(onboardingflow.Status) bool) onboardingflow.Status {
	t.Helper()
	var st onboardingflow.Status
	awaitCond(ctx, t, what, func() bool {
		var err error
		st, err = c.OnboardingStatus(ctx, m)
		return err == nil && ok(st)
	})
	return st
}

// awaitCond polls cond until it holds, or fails at ctx's deadline.
func awaitCond(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("never: %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
