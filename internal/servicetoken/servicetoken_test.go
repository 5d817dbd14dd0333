package servicetoken

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cartwright-dev/cartwright/internal/config"
)

// TestTokenIsRefreshedBeforeItExpires: a token with less than a minute
// left is fetched again (no call goes out with one about to expire); one
// with more is reused. The client authenticates with its own id and the
// secret of its file.
func TestTokenIsRefreshedBeforeItExpires(t *testing.T) {
	var fetched atomic.Int32
	lifetime := atomic.Int32{}
	lifetime.Store(50) // seconds: inside the minute before expiry
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("client_id") != "cartwright-worker" || r.PostFormValue("client_secret") != "s3cret" ||
			r.PostFormValue("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		n := fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"bearer","expires_in":%d}`, n, lifetime.Load())
	}))
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds, err := Func(config.OIDCClient{TokenURL: srv.URL, ClientID: "cartwright-worker", ClientSecretFile: secret})
	if err != nil || creds == nil {
		t.Fatalf("token func: %v", err)
	}
	ts, _ := TokenSource(config.OIDCClient{TokenURL: srv.URL, ClientID: "cartwright-worker", ClientSecretFile: secret})
	a, _ := ts.Token()
	b, _ := ts.Token()
	if a.AccessToken == b.AccessToken {
		t.Fatalf("a token with %ds left was reused: %s", lifetime.Load(), a.AccessToken)
	}
	lifetime.Store(600)
	c, _ := ts.Token()
	d, _ := ts.Token()
	if c.AccessToken != d.AccessToken {
		t.Fatalf("a token with 10 minutes left was fetched again: %s, %s", c.AccessToken, d.AccessToken)
	}
	if none, err := Func(config.OIDCClient{}); none != nil || err != nil {
		t.Fatalf("no client configured: %v", err)
	}
	bad, _ := TokenSource(config.OIDCClient{TokenURL: srv.URL, ClientID: "someone-else", ClientSecretFile: secret})
	if _, err := bad.Token(); err == nil {
		t.Fatal("a client the provider refuses got a token")
	}
}
