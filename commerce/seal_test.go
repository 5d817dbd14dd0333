package commerce

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func sealKey(c byte) []byte { return []byte(strings.Repeat(string(c), sealKeyLen)) }

func sealedSample(t *testing.T, r *SealRing, wf string) Total {
	t.Helper()
	tot := sampleTotal()
	e := TotalEvidence{EvidenceRefs: EvidenceRefs{PricingSnapshotID: "ev_01ARZ3NDEKTSV4RRFFQ69G5FAV",
		ComplianceSnapshotID: "ev_01ARZ3NDEKTSV4RRFFQ69G5FAW"}, IssuedAt: time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)}
	var err error
	if e.Seal, err = r.Seal(wf, tot, e); err != nil {
		t.Fatal(err)
	}
	tot.Evidence = &e
	return tot
}

// A seal verifies for its workflow only, and not once anything it covers
// changed: the amounts, the quote hash, an evidence id, the issue time.
func TestSealCoversTotalWorkflowAndEvidence(t *testing.T) {
	r, err := NewSealRing("k1", map[string][]byte{"k1": sealKey('a')})
	if err != nil {
		t.Fatal(err)
	}
	tot := sealedSample(t, r, "draft-order/u/k")
	if err := r.Verify("draft-order/u/k", tot); err != nil {
		t.Fatalf("genuine seal: %v", err)
	}
	if r.Verify("draft-order/u/other", tot) == nil {
		t.Fatal("a seal verified for another workflow")
	}
	for name, edit := range map[string]func(*Total){
		"grand total":     func(t *Total) { t.GrandTotal.Amount-- },
		"due on delivery": func(t *Total) { t.DueOnDelivery.Amount++ },
		"quote hash":      func(t *Total) { t.QuoteHash = "sha256:" + strings.Repeat("0", 64) },
		"expiry":          func(t *Total) { t.ExpiresAt = t.ExpiresAt.Add(time.Hour) },
		"pricing ref":     func(t *Total) { t.Evidence.PricingSnapshotID = "ev_01ARZ3NDEKTSV4RRFFQ69G5FAX" },
		"compliance ref":  func(t *Total) { t.Evidence.ComplianceSnapshotID = "" },
		"approval ref":    func(t *Total) { t.Evidence.ApprovalSnapshotID = "ev_01ARZ3NDEKTSV4RRFFQ69G5FAY" },
		"issued at":       func(t *Total) { t.Evidence.IssuedAt = t.Evidence.IssuedAt.Add(time.Second) },
		"no seal":         func(t *Total) { t.Evidence.Seal = "" },
		"other version":   func(t *Total) { t.Evidence.Seal = "qs2" + t.Evidence.Seal[3:] },
	} {
		changed := tot
		ev := *tot.Evidence
		changed.Evidence = &ev
		edit(&changed)
		if r.Verify("draft-order/u/k", changed) == nil {
			t.Errorf("%s changed and the seal still verifies", name)
		}
	}
}

// Rotation: a seal made under a retired key verifies while the key is in
// the ring; a ring without it refuses it; the current key seals.
func TestSealRingRotates(t *testing.T) {
	old, _ := NewSealRing("k1", map[string][]byte{"k1": sealKey('a')})
	tot := sealedSample(t, old, "wf")
	spec := "k2:" + base64.StdEncoding.EncodeToString(sealKey('b')) + ",k1:" + base64.StdEncoding.EncodeToString(sealKey('a'))
	both, err := ParseSealRing(spec, "k2")
	if err != nil {
		t.Fatal(err)
	}
	if err := both.Verify("wf", tot); err != nil {
		t.Fatalf("a retired key's seal: %v", err)
	}
	if !strings.HasPrefix(sealedSample(t, both, "wf").Evidence.Seal, "qs1.k2.") {
		t.Fatal("the current key does not seal")
	}
	onlyNew, _ := ParseSealRing("k2:"+base64.StdEncoding.EncodeToString(sealKey('b')), "")
	if onlyNew.Verify("wf", tot) == nil {
		t.Fatal("a seal of a key no longer in the ring verified")
	}
}

// No ring, no seal: the key is never derived from the evidence key (which
// the MCP gateway holds), so a process without the ring cannot seal; a
// malformed ring is refused.
func TestSealRingIsNeverDerived(t *testing.T) {
	ev := base64.StdEncoding.EncodeToString(sealKey('e'))
	for _, bad := range []struct{ spec, id string }{{"", ""}, {" ", ""}, {"k1", ""}, {"k1:!!", ""},
		{"k1:" + base64.StdEncoding.EncodeToString([]byte("short")), ""}, {"k1:" + ev, "k9"}} {
		if _, err := ParseSealRing(bad.spec, bad.id); err == nil {
			t.Errorf("ring %q current %q accepted", bad.spec, bad.id)
		}
	}
	if _, err := ParseSealRing("", ""); err == nil || !strings.Contains(err.Error(), "CARTWRIGHT_QUOTE_SEAL_KEYS") {
		t.Fatalf("no ring: %v, want an error naming CARTWRIGHT_QUOTE_SEAL_KEYS", err)
	}
}
