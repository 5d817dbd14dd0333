package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestRefusalLeavesEvidence: a tool's
// refusal gets its snapshot like an answer: the snapshot's output is the
// envelope's error object (sanitised), its hash is the envelope's, and the
// envelope names the snapshot. A retryable failure leaves none.
func TestRefusalLeavesEvidence(t *testing.T) {
	inv, sink := newTestInvoker(t, echoSpec(), func(context.Context, *Call) (*Output, error) {
		return nil, Errorf(ComplianceBlocked, "cannot ship to jane.doe@example.com by air").
			WithDetail("rule", "UN3480").WithRecovery("choose ground shipping")
	})
	resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1})
	if CodeOf(err) != ComplianceBlocked {
		t.Fatalf("err = %v, want COMPLIANCE_BLOCKED", err)
	}
	if sink.count() != 1 {
		t.Fatalf("%d snapshots for a refusal, want 1", sink.count())
	}
	snap := sink.snaps[0]
	if resp.OK || resp.Status != StatusError || resp.SnapshotID() == "" || snap.Status != StatusError || snap.Tool != "test.echo" {
		t.Fatalf("envelope %+v, snapshot %+v", resp, snap)
	}
	if strings.Contains(string(snap.Output), "jane.doe@example.com") || strings.Contains(resp.Error.Message, "jane.doe@example.com") {
		t.Fatalf("the refusal kept raw PII: %s / %s", snap.Output, resp.Error.Message)
	}
	inHistory, _ := json.Marshal(resp.Error) // what the workflow history holds
	hash, _ := CanonicalHash(inHistory)
	if snap.OutputHash != hash || resp.Evidence.Sources[0].Hash != hash {
		t.Fatalf("hash: snapshot %s, envelope %s, error object %s", snap.OutputHash, resp.Evidence.Sources[0].Hash, hash)
	}
	var stored Error
	if err := json.Unmarshal(snap.Output, &stored); err != nil || stored.Code != ComplianceBlocked || stored.RecoverySuggestion == "" {
		t.Fatalf("snapshot output %s (%v)", snap.Output, err)
	}

	retry, sink2 := newTestInvoker(t, echoSpec(), func(context.Context, *Call) (*Output, error) {
		return nil, errors.New("connection reset")
	})
	if _, err := retry.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1}); CodeOf(err) != UpstreamError {
		t.Fatalf("err = %v", err)
	}
	if sink2.count() != 0 {
		t.Fatalf("a retryable failure left %d snapshots", sink2.count())
	}
}

// TestRefusalWithoutEvidenceIsNotGiven: when the refusal's snapshot cannot
// be stored, the answer is UPSTREAM_ERROR (retried), never an unevidenced
// refusal.
func TestRefusalWithoutEvidenceIsNotGiven(t *testing.T) {
	reg := NewRegistry(testSchemas)
	reg.MustRegister(echoSpec(), func(context.Context, *Call) (*Output, error) {
		return nil, Errorf(OutOfStock, "none left")
	})
	inv := NewInvoker(reg, failingSink{}, nil)
	resp, err := inv.Invoke(context.Background(), "test.echo", validRequest(), map[string]any{"country": "DE", "quantity": 1})
	if CodeOf(err) != UpstreamError || resp.Error.Code != UpstreamError || resp.SnapshotID() != "" {
		t.Fatalf("err %v, envelope error %+v", err, resp.Error)
	}
}

type failingSink struct{ Unstaged }

func (failingSink) RecordStep(context.Context, Snapshot) (Recorded, error) {
	return Recorded{}, errors.New("evidence database down")
}
