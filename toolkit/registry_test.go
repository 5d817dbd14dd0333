package toolkit

import (
	"context"
	"strings"
	"testing"
)

func nopHandler(context.Context, *Call) (*Output, error) { return &Output{Data: map[string]any{}}, nil }

func TestRegisterRefusesContradictorySpecs(t *testing.T) {
	cases := map[string]func(*Spec){
		"destructive and read_only":    func(s *Spec) { s.Annotations.Destructive, s.NeedsConsent = true, true },
		"write without idempotency":    func(s *Spec) { s.Annotations = Annotations{} },
		"sensitive sink and read_only": func(s *Spec) { s.Annotations.SensitiveSink = true },
		"destructive without consent":  func(s *Spec) { s.Annotations = Annotations{Idempotent: true, Destructive: true} },
		"not dotted":                   func(s *Spec) { s.Name = "echo" },
		"not semver":                   func(s *Spec) { s.Version = "v1" },
		"no description":               func(s *Spec) { s.Description = "echo" },
		"no timeout":                   func(s *Spec) { s.Timeout = 0 },
		"unknown actor":                func(s *Spec) { s.AllowedActors = []ActorType{"robot"} },
		"schema without $id":           func(s *Spec) { s.InputSchema = "noid.json" },
		"schema without $schema":       func(s *Spec) { s.OutputSchema = "noschema.json" },
		"schema missing":               func(s *Spec) { s.InputSchema = "nope.json" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			spec := echoSpec()
			mutate(&spec)
			if err := NewRegistry(testSchemas).Register(spec, nopHandler); err == nil {
				t.Fatalf("registration of a spec with %s succeeded", name)
			}
		})
	}
}

func TestRegisterAcceptsConsistentSpecsOnce(t *testing.T) {
	reg := NewRegistry(testSchemas)
	if err := reg.Register(echoSpec(), nopHandler); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	write := echoSpec()
	write.Name, write.Annotations = "test.write", Annotations{Idempotent: true, Destructive: true}
	write.NeedsConsent = true
	if err := reg.Register(write, nopHandler); err != nil {
		t.Fatalf("consistent write spec refused: %v", err)
	}
	err := reg.Register(echoSpec(), nopHandler)
	if err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("duplicate registration: got %v", err)
	}
	if got := len(reg.Specs()); got != 2 {
		t.Fatalf("Specs() = %d, want 2", got)
	}
}

func TestDisabledToolIsForbidden(t *testing.T) {
	calls := 0
	inv, _ := newTestInvoker(t, echoSpec(), echoHandler(&calls))
	if err := inv.Registry().SetEnabled("test.echo", false); err != nil {
		t.Fatal(err)
	}
	_, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1})
	if CodeOf(err) != Forbidden || calls != 0 {
		t.Fatalf("disabled tool: code %v, calls %d", CodeOf(err), calls)
	}
	_, err = inv.Invoke(context.Background(), "test.nope", validRequest(), nil)
	if CodeOf(err) != NotFound {
		t.Fatalf("unregistered tool: code %v", CodeOf(err))
	}
}
