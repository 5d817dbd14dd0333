package onboardingflow

import (
	"fmt"
	"regexp"

	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// IDPrefix starts every onboarding workflow id.
const IDPrefix = "onboarding/"

// merchantIDPattern mirrors the merchants table's check: an opaque id, so
// no name or e-mail can become part of a workflow id.
var merchantIDPattern = regexp.MustCompile(`^m_[a-z0-9_]{3,60}$`)

// ID is the workflow id of a merchant's onboarding:
// onboarding/{merchant_id}. One merchant has at most one onboarding
// running; the webhook receiver and the backend both reach it by this id.
func ID(merchantID string) (string, error) {
	if err := CheckMerchantID(merchantID); err != nil {
		return "", err
	}
	return IDPrefix + merchantID, nil
}

// CheckMerchantID refuses an id that is not an opaque merchant id.
func CheckMerchantID(merchantID string) error {
	if !merchantIDPattern.MatchString(merchantID) {
		return fmt.Errorf("merchant_id must be m_ and 3 to 60 of a-z 0-9 _")
	}
	return nil
}

// onboardingKey is the envelope idempotency key of one side-effecting step
// (a relink URL, a login link): derived from the workflow id, the chain's
// first run id and the step number. Not the current run id, which changes
// on continue-as-new: every attempt and every replay of a step, in any run
// of the chain, sends Stripe the same key and so gets the same object. The
// first run id keeps a later onboarding of the same merchant (a new chain
// under the same workflow id) from replaying an old, expired link.
func onboardingKey(workflowID, chainID, step string) string {
	return "onb-" + flow.ShortHash(workflowID+"/"+chainID+"/"+step)
}
