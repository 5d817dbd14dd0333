package flow

import (
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolSpecs are the specs of the tools the workflows call, by name. The
// workflows derive each call's timeouts and retries from them (the invoker
// enforces the same specs), so they are handed over explicitly: Register
// and Registry bind the workflows to the specs of the worker's registry.
// There is no default and no global: a call to a tool without a spec fails
// with NOT_FOUND instead of running on options nobody chose. Activity
// options are not part of the replay check, so a spec changed between
// deployments cannot break a replay.
type ToolSpecs map[string]toolkit.Spec

func NewToolSpecs(list []toolkit.Spec) ToolSpecs {
	s := make(ToolSpecs, len(list))
	for _, spec := range list {
		s[spec.Name] = spec
	}
	return s
}

// Get returns the spec of tool name, or NOT_FOUND naming the tool.
func (s ToolSpecs) Get(name string) (toolkit.Spec, error) {
	if spec, ok := s[name]; ok {
		return spec, nil
	}
	return toolkit.Spec{}, toolkit.Errorf(toolkit.NotFound, "tool %s has no spec in this worker: register the tool (and its spec) before calling it", name).
		WithRecovery("call a tool listed by ListTools")
}
