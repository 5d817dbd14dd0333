package servicetoken

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/cartwright-dev/cartwright/internal/config"
)

// TestProviderOfAPrivateCAIsReachedWithItsCA: a provider whose https
// certificate a private CA signed (make cluster's) gives no token unless
// CARTWRIGHT_OIDC_CA_FILE names that CA; with it, the token comes. A file
// without a certificate is refused at the start, not at the first call.
func TestProviderOfAPrivateCAIsReachedWithItsCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok","token_type":"bearer","expires_in":600}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	secret, ca := filepath.Join(dir, "secret"), filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	o := config.OIDCClient{TokenURL: srv.URL, ClientID: "cartwright-worker", ClientSecretFile: secret}
	without, err := Func(o)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := without(context.Background()); err == nil {
		t.Fatalf("a provider of an unknown CA gave token %q", tok)
	}
	o.CAFile = ca
	with, err := Func(o)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := with(context.Background()); err != nil || tok != "tok" {
		t.Fatalf("with its CA: %q, %v", tok, err)
	}
	o.CAFile = secret
	if _, err := Func(o); err == nil {
		t.Fatal("a CA file without a certificate was accepted")
	}
}
