package stripetools

import (
	"testing"
	"time"
)

// An account link's times come from Stripe unless they cannot be true of a
// link made now (stripe-mock's 2009 fixtures): then it is dated now and its
// expiry estimated, never shown as expired years ago.
func TestAccountLinkTimes(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	real := accountLinkTimes("u", now.Unix(), now.Add(5*time.Minute).Unix(), now)
	if real.estimated || !real.expiresAt.Equal(now.Add(5*time.Minute)) {
		t.Errorf("Stripe's own expiry replaced: %+v", real)
	}
	mock := accountLinkTimes("u", 1234567890, 1234567890, now)
	if !mock.estimated || !mock.createdAt.Equal(now) || !mock.expiresAt.Equal(now.Add(AccountLinkLifetime)) {
		t.Errorf("stripe-mock's fixture times kept: %+v", mock)
	}
}
