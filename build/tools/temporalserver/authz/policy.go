// Package authz is cartwright's authorizer and claim mapper for Temporal's
// server (docs/operators.md#who-may-do-what-on-the-cluster): every call to
// the frontend carries either the internode certificate or an access token
// of the organisation's OpenID Connect provider, and the policy file
// (deploy/temporal/authorization.yaml) says what each identity may do.
//
// It lives in the tools module beside the server it is linked into, so the
// application's go.mod never pulls in Temporal's server.
package authz

import (
	"bytes"
	"fmt"
	"os"
	pathpkg "path"
	"slices"

	"gopkg.in/yaml.v3"
)

// Policy is the authorization file: which task queues are cartwright's,
// what each service client may start and send, what each staff group may do.
type Policy struct {
	// TaskQueues are cartwright's queues (path.Match patterns): only an
	// identity with Poll polls them (a sticky queue counts as its normal
	// queue's), nobody polls any other, and runs are started on them only.
	TaskQueues []string `yaml:"taskQueues"`
	// Services are the client-credentials clients, by client id (the
	// token's sub and client_id).
	Services map[string]Grant `yaml:"services"`
	// Groups are the staff groups of the provider's groups claim.
	Groups map[string]Grant `yaml:"groups"`
}

// Grant is what one service or one group may do beyond reading. Reading
// (describe, list, history, query) is every known identity's.
type Grant struct {
	// Poll: poll and answer tasks on TaskQueues (the worker).
	Poll bool `yaml:"poll"`
	// Start lists the workflow types it may start (signal-with-start and
	// update-with-start included).
	Start []string `yaml:"start"`
	// Signal and Update list the signal and update names it may send.
	Signal []string `yaml:"signal"`
	Update []string `yaml:"update"`
	// Cancel: request cancellation of a run.
	Cancel bool `yaml:"cancel"`
	// Schedules: create, update, patch and delete schedules.
	Schedules bool `yaml:"schedules"`
	// Deployments: Worker Versioning (current and ramping version, rules).
	Deployments bool `yaml:"deployments"`
	// Admin: terminate, reset, delete runs, batch operations, namespace and
	// operator calls.
	Admin bool `yaml:"admin"`
}

// LoadPolicy reads and checks the policy file.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("authorization policy: %w", err)
	}
	var p Policy
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("authorization policy %s: %w", path, err)
	}
	if len(p.TaskQueues) == 0 {
		return nil, fmt.Errorf("authorization policy %s: no taskQueues", path)
	}
	for _, q := range p.TaskQueues {
		if _, err := pathpkg.Match(q, ""); err != nil {
			return nil, fmt.Errorf("authorization policy %s: task queue pattern %q: %w", path, q, err)
		}
	}
	return &p, nil
}

// grants are the grants of one identity: its service's, or its groups'.
type grants []Grant

func (g grants) any(f func(Grant) bool) bool { return slices.ContainsFunc(g, f) }

func (g grants) poll() bool        { return g.any(func(x Grant) bool { return x.Poll }) }
func (g grants) cancel() bool      { return g.any(func(x Grant) bool { return x.Cancel }) }
func (g grants) schedules() bool   { return g.any(func(x Grant) bool { return x.Schedules }) }
func (g grants) deployments() bool { return g.any(func(x Grant) bool { return x.Deployments }) }
func (g grants) admin() bool       { return g.any(func(x Grant) bool { return x.Admin }) }
func (g grants) start(t string) bool {
	return g.any(func(x Grant) bool { return slices.Contains(x.Start, t) })
}
func (g grants) signal(n string) bool {
	return g.any(func(x Grant) bool { return slices.Contains(x.Signal, n) })
}
func (g grants) update(n string) bool {
	return g.any(func(x Grant) bool { return slices.Contains(x.Update, n) })
}

// grantsOf: a service token gets its service's grant; a staff token its
// groups' (unknown groups give nothing).
func (p *Policy) grantsOf(id *Identity) grants {
	if id == nil {
		return nil
	}
	if id.Service != "" {
		if g, ok := p.Services[id.Service]; ok {
			return grants{g}
		}
		return nil
	}
	var gs grants
	for _, name := range id.Groups {
		if g, ok := p.Groups[name]; ok {
			gs = append(gs, g)
		}
	}
	return gs
}
