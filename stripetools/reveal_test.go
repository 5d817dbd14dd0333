package stripetools

import (
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestRevealLinkFromEncryptedEvidence stores a relink call in the real
// evidence store and checks the whole secrecy path: the database holds the
// link only encrypted, and RevealLink (a logged read) gets it back.
func TestRevealLinkFromEncryptedEvidence(t *testing.T) {
	pool := testenv.Postgres(t)
	store, _ := evidencetest.Store(t, pool, nil)
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	fake.SetAccount(acct, stripefake.Account{CurrentlyDue: []string{"external_account"}})
	c, err := NewClient(Config{SecretKey: testKey, APIBase: fake.URL,
		ReturnURL: "https://shop.example/r", RefreshURL: "https://shop.example/f"})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, c); err != nil {
		t.Fatal(err)
	}
	inv := toolkit.NewInvoker(reg, store, zap.NewNop())
	ctx := ctxT(t)

	resp, err := inv.Invoke(ctx, ToolRelinkURL, request("onb-reveal-1"), statusIn())
	if err != nil {
		t.Fatal(err)
	}
	var l Link
	_ = resp.Decode(&l)
	id := resp.SnapshotID()
	if id == "" || l.Secret != "***" {
		t.Fatalf("snapshot %q, link %+v", id, l)
	}

	var clear, sealed string
	if err := pool.QueryRow(ctx, `SELECT output::text, encode(raw_ciphertext, 'escape') FROM evidence_snapshots WHERE snapshot_id = $1`, id).
		Scan(&clear, &sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(clear, "https://") || strings.Contains(sealed, "connect.stripe.test") || !strings.Contains(clear, l.URLSHA256) {
		t.Fatalf("stored clear output %s must hold the hash and no link", clear)
	}

	got, err := RevealLink(ctx, store, id, l.URLSHA256, "merchant-session-service")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.URL, "https://connect.stripe.test/setup/s/"+acct+"/") || URLHash(got.URL) != l.URLSHA256 || got.ExpiresAt != l.ExpiresAt {
		t.Fatalf("revealed %+v", got)
	}
	var reads int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM evidence_access_log WHERE snapshot_id = $1`, id).Scan(&reads); err != nil || reads != 1 {
		t.Fatalf("access log rows = %d (%v), want 1", reads, err)
	}
	if _, err := RevealLink(ctx, store, id, "sha256:"+strings.Repeat("0", 64), "merchant-session-service"); err == nil {
		t.Fatal("a hash mismatch must refuse to reveal")
	}
}
