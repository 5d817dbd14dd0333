package draftordertest

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// TestSanctionedDestinationWithoutPostcodeIsBlocked:
// the draft order runs shipping beside compliance and ranks ADDRESS_INVALID
// before COMPLIANCE_BLOCKED, so an address error from the shipping tool
// used to hide the sanction. Every tool now refuses a sanctioned
// destination first, and the run ends COMPLIANCE_BLOCKED.
func TestSanctionedDestinationWithoutPostcodeIsBlocked(t *testing.T) {
	testenv.Integration(t)
	s := newStack(t, worker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	for _, to := range []commerce.Address{
		{Name: "A. Person", Line1: "1 Street", City: "Tehran", Country: "IR"},
		{Name: "A. Person", Line1: "1 Street", City: "Simferopol", Region: "Crimea", Country: "UA"},
	} {
		in := input(uniqueKey("e2e-sanctioned"), tshirt)
		in.ShipTo = to
		res, err := drafttest.Result(ctx, s.tc, s.start(ctx, in).GetID())
		if err != nil {
			t.Fatalf("%s: %v", to.Country, err)
		}
		if res.State != draftorder.StateComplianceBlocked || res.Code != toolkit.ComplianceBlocked {
			t.Errorf("%s %s without a postcode: %s %s (%s), want COMPLIANCE_BLOCKED", to.Country, to.Region, res.State, res.Code, res.Message)
		}
	}
}
