package workflows

import (
	"sync"
	"time"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The workflow derives each activity's timeouts and retries from the called
// tool's spec. The specs live in the worker's registry (the invoker enforces
// the same ones), so the worker hands them over once at start-up with
// UseToolSpecs. Activity options are not part of the replay check, so a
// spec changed between deployments cannot break a replay.
var (
	specsMu sync.RWMutex
	specs   = map[string]toolkit.Spec{support.RecordApprovalTool: support.RecordApprovalSpec}
)

// fallbackSpec is used for a tool the worker did not declare: generous
// enough for any of our tools, bounded so a call never hangs a workflow.
var fallbackSpec = toolkit.Spec{
	Timeout: 30 * time.Second,
	Retry:   toolkit.RetryPolicy{InitialInterval: 500 * time.Millisecond, MaxInterval: 10 * time.Second, MaxAttempts: 5},
}

// UseToolSpecs declares the specs of the tools the workflows call, normally
// registry.Specs() of the worker's registry.
func UseToolSpecs(list ...toolkit.Spec) {
	specsMu.Lock()
	defer specsMu.Unlock()
	for _, s := range list {
		specs[s.Name] = s
	}
}

// toolSpec returns the declared spec of a tool, or fallbackSpec.
func toolSpec(name string) toolkit.Spec {
	specsMu.RLock()
	defer specsMu.RUnlock()
	if s, ok := specs[name]; ok {
		return s
	}
	s := fallbackSpec
	s.Name = name
	return s
}
