package authz

import (
	"context"
	"path"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// Authorizer decides each frontend call by the caller's Identity and the
// Policy: internode traffic may do anything; a known identity may read; the
// rest is granted per API below, and everything else is PermissionDenied.
type Authorizer struct {
	policy *Policy
	logger log.Logger
}

// NewAuthorizer is the authorizer of one policy; logger (may be nil) gets
// every refusal.
func NewAuthorizer(p *Policy, logger log.Logger) *Authorizer {
	return &Authorizer{policy: p, logger: logger}
}

// readOnlyOperatorAPIs are the operator service's reads (its metadata
// marks none read-only): the Web UI lists the search attributes.
var readOnlyOperatorAPIs = []string{
	api.OperatorServicePrefix + "ListSearchAttributes",
}

var _ authorization.Authorizer = (*Authorizer)(nil)

var (
	allow = authorization.Result{Decision: authorization.DecisionAllow}
	deny  = authorization.Result{Decision: authorization.DecisionDeny}
)

// workerAPIs answer or keep up tasks: only a poller's (the task token in
// them names no queue, and it is not signed).
var workerAPIs = []string{
	"RespondWorkflowTaskCompleted", "RespondWorkflowTaskFailed", "RespondQueryTaskCompleted",
	"RecordActivityTaskHeartbeat", "RecordActivityTaskHeartbeatById",
	"RespondActivityTaskCompleted", "RespondActivityTaskCompletedById",
	"RespondActivityTaskFailed", "RespondActivityTaskFailedById",
	"RespondActivityTaskCanceled", "RespondActivityTaskCanceledById",
	"RespondNexusTaskCompleted", "RespondNexusTaskFailed",
	"ResetStickyTaskQueue", "ShutdownWorker", "RecordWorkerHeartbeat",
}

var scheduleAPIs = []string{"CreateSchedule", "UpdateSchedule", "PatchSchedule", "DeleteSchedule"}

var deploymentAPIs = []string{
	"SetWorkerDeploymentCurrentVersion", "SetWorkerDeploymentRampingVersion", "SetWorkerDeploymentManager",
	"DeleteWorkerDeployment", "DeleteWorkerDeploymentVersion", "UpdateWorkerDeploymentVersionMetadata",
	"UpdateWorkerVersioningRules", "UpdateWorkerBuildIdCompatibility", "SetCurrentDeployment",
}

// adminAPIs are the destructive and operator calls: the admin group's.
var adminAPIs = []string{
	"TerminateWorkflowExecution", "ResetWorkflowExecution", "DeleteWorkflowExecution",
	"StartBatchOperation", "StopBatchOperation", "UpdateWorkflowExecutionOptions",
	"UpdateActivityOptions", "PauseActivity", "UnpauseActivity", "ResetActivity",
	"RegisterNamespace", "UpdateNamespace", "DeprecateNamespace",
	"CreateWorkflowRule", "DeleteWorkflowRule", "TriggerWorkflowRule",
	"UpdateTaskQueueConfig", "UpdateWorkerConfig",
}

// Authorize implements authorization.Authorizer.
func (a *Authorizer) Authorize(_ context.Context, c *authorization.Claims, t *authorization.CallTarget) (authorization.Result, error) {
	if authorization.IsHealthCheckAPI(t.APIName) {
		return allow, nil
	}
	var id *Identity
	if c != nil {
		id, _ = c.Extensions.(*Identity)
	}
	if id == nil {
		return deny, nil
	}
	if id.Internode {
		return allow, nil
	}
	g := a.policy.grantsOf(id)
	if len(g) > 0 && a.decide(g, t) {
		return allow, nil
	}
	// The caller learns what was refused to whom (its own call, nothing
	// more); the operator finds it in the frontend's log too.
	who := id.Subject
	if id.Service == "" {
		who += " (groups " + strings.Join(id.Groups, ",") + ")"
	}
	reason := who + " may not call " + api.MethodName(t.APIName)
	if a.logger != nil {
		a.logger.Warn("cartwright authorizer: refused", tag.NewStringTag("reason", reason))
	}
	return authorization.Result{Decision: authorization.DecisionDeny, Reason: reason}, nil
}

func (a *Authorizer) decide(g grants, t *authorization.CallTarget) bool {
	md := api.GetMethodMetadata(t.APIName)
	method := api.MethodName(t.APIName)
	isWorkflowService := strings.HasPrefix(t.APIName, api.WorkflowServicePrefix)
	if isWorkflowService && md.Access == api.AccessReadOnly {
		return true
	}
	if slices.Contains(readOnlyOperatorAPIs, t.APIName) {
		return true
	}
	if !isWorkflowService {
		// Operator and admin services: the admin group's.
		return g.admin()
	}
	switch {
	case method == "PollWorkflowTaskQueue" || method == "PollActivityTaskQueue" || method == "PollNexusTaskQueue":
		return g.poll() && a.cartwrightQueue(pollQueue(t.Request))
	case slices.Contains(workerAPIs, method):
		return g.poll()
	case slices.Contains(scheduleAPIs, method):
		return g.schedules() || g.admin()
	case slices.Contains(deploymentAPIs, method):
		return g.deployments() || g.admin()
	case slices.Contains(adminAPIs, method):
		return g.admin()
	case method == "RequestCancelWorkflowExecution":
		return g.cancel() || g.admin()
	}
	switch r := t.Request.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		return a.startOK(g, r)
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		return g.start(typeName(r.GetWorkflowType())) && a.cartwrightQueue(r.GetTaskQueue().GetName()) && g.signal(r.GetSignalName())
	case *workflowservice.SignalWorkflowExecutionRequest:
		return g.signal(r.GetSignalName())
	case *workflowservice.UpdateWorkflowExecutionRequest:
		return g.update(r.GetRequest().GetInput().GetName())
	case *workflowservice.ExecuteMultiOperationRequest:
		return a.multiOperation(g, r)
	}
	return false
}

// startOK: a start names a workflow type the identity may start, on one
// of cartwright's queues (a run on a queue of the caller's own would be
// run by the caller's own code).
func (a *Authorizer) startOK(g grants, r *workflowservice.StartWorkflowExecutionRequest) bool {
	return g.start(typeName(r.GetWorkflowType())) && a.cartwrightQueue(r.GetTaskQueue().GetName())
}

// multiOperation: update-with-start needs both the start and the update.
func (a *Authorizer) multiOperation(g grants, r *workflowservice.ExecuteMultiOperationRequest) bool {
	if len(r.GetOperations()) == 0 {
		return false
	}
	for _, op := range r.GetOperations() {
		switch {
		case op.GetStartWorkflow() != nil:
			if !a.startOK(g, op.GetStartWorkflow()) {
				return false
			}
		case op.GetUpdateWorkflow() != nil:
			if !g.update(op.GetUpdateWorkflow().GetRequest().GetInput().GetName()) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func typeName(t *commonpb.WorkflowType) string { return t.GetName() }

// pollQueue is the queue a poll names: a sticky queue's normal queue.
func pollQueue(req any) string {
	var tq *taskqueuepb.TaskQueue
	switch r := req.(type) {
	case *workflowservice.PollWorkflowTaskQueueRequest:
		tq = r.GetTaskQueue()
	case *workflowservice.PollActivityTaskQueueRequest:
		tq = r.GetTaskQueue()
	case *workflowservice.PollNexusTaskQueueRequest:
		tq = r.GetTaskQueue()
	}
	if tq.GetKind() == enumspb.TASK_QUEUE_KIND_STICKY {
		return tq.GetNormalName()
	}
	return tq.GetName()
}

// cartwrightQueue: q matches one of the policy's queue patterns.
func (a *Authorizer) cartwrightQueue(q string) bool {
	if q == "" {
		return false
	}
	for _, p := range a.policy.TaskQueues {
		if ok, _ := path.Match(p, q); ok {
			return true
		}
	}
	return false
}
