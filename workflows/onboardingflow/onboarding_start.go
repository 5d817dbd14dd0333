package onboardingflow

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows"
)

// OnboardingStartOptions are the options every caller (client, webhook
// receiver) starts or signal-starts a merchant's onboarding with.
func OnboardingStartOptions(taskQueue, merchantID string) (client.StartWorkflowOptions, error) {
	id, err := OnboardingID(merchantID)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	opts := workflows.StartOptions(id, taskQueue, workflows.FlowOnboarding, OnboardingReadingMerchant, "Stripe onboarding of "+merchantID)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	return opts, nil
}
