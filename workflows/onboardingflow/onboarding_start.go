package onboardingflow

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows"
)

// StartOptions are the options every caller (client, webhook
// receiver) starts or signal-starts a merchant's onboarding with.
func StartOptions(taskQueue, merchantID string) (client.StartWorkflowOptions, error) {
	id, err := ID(merchantID)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	opts := workflows.StartOptions(id, taskQueue, workflows.FlowOnboarding, StateReadingMerchant, "Stripe onboarding of "+merchantID)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	return opts, nil
}
