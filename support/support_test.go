package support

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

type fakeRoster map[string]StaffMember

func (f fakeRoster) Lookup(_ context.Context, id string) (StaffMember, bool, error) {
	m, ok := f[id]
	return m, ok, nil
}

// TestSpecRegisters checks the spec against the registry's rules and that
// both schemas compile.
func TestSpecRegisters(t *testing.T) {
	reg := toolkit.NewRegistry(schemas.FS)
	if err := reg.Register(RecordApprovalSpec, RecordApprovalHandler(fakeRoster{})); err != nil {
		t.Fatal(err)
	}
}

func TestHandlerRefusesInactiveAndUnknown(t *testing.T) {
	h := RecordApprovalHandler(fakeRoster{
		"alice.support": {ID: "alice.support", Role: RoleSupport, Active: true},
		"dave.former":   {ID: "dave.former", Role: RoleSupport, Active: false},
	})
	call := func(approver string) error {
		in, _ := json.Marshal(RecordApprovalArgs{Flow: "draft_order", Subject: "review", ApprovalID: "apr_0123456789abcdef",
			Decision: DecisionApprove, Approver: approver})
		_, err := h(context.Background(), &toolkit.Call{Input: in, Spec: RecordApprovalSpec})
		return err
	}
	if err := call("alice.support"); err != nil {
		t.Fatalf("active staff: %v", err)
	}
	if c := toolkit.CodeOf(call("dave.former")); c != toolkit.Forbidden {
		t.Fatalf("inactive staff: %s", c)
	}
	if c := toolkit.CodeOf(call("nobody.here")); c != toolkit.NotFound {
		t.Fatalf("unknown staff: %s", c)
	}
}
