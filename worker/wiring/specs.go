package wiring

import (
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/onboarding"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ToolSpecs are the specs of every tool Build registers, without building
// the tools' clients: what a process that only replays workflows (the
// auditor) binds them to. TestToolSpecsAreTheRegistrys holds it to Build.
func ToolSpecs() []toolkit.Spec {
	var out []toolkit.Spec
	for _, list := range [][]toolkit.Spec{commerce.Specs(), support.Specs(), onboarding.Specs()} {
		out = append(out, list...)
	}
	return out
}
