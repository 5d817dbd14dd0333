package clustertest

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	"go.yaml.in/yaml/v3"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The cluster's OpenID Connect provider as the tests reach it
// (scripts/cluster-idp.sh: Hydra public on base+22, admin on base+23).

func (c cluster) issuer(t *testing.T) string {
	t.Helper()
	iss := c.env["CARTWRIGHT_OIDC_ISSUER"]
	if iss == "" {
		t.Skip("the cluster runs without the provider (CLUSTER_AUTH=0)")
	}
	return iss
}

func (c cluster) idpAdmin(t *testing.T) string { return "http://" + c.port(t, 23) }

// idpHTTP is a client for the provider's https issuer, whose certificate
// the cluster's client CA signed (trusted for these calls only, so the
// tests' Temporal dials still need their own CA setting).
func (c cluster) idpHTTP(t *testing.T, jar http.CookieJar) *http.Client {
	t.Helper()
	return &http.Client{Jar: jar, Timeout: 15 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: c.pool(t, "ca"), MinVersion: tls.VersionTLS12}}}
}

func (c cluster) secret(t *testing.T, clientID string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "idp", clientID+".secret"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// serviceToken is a service's access token (client credentials).
func (c cluster) serviceToken(t *testing.T, clientID string) string {
	t.Helper()
	cc := clientcredentials.Config{ClientID: clientID, ClientSecret: c.secret(t, clientID),
		TokenURL: c.issuer(t) + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}
	tok, err := cc.Token(context.WithValue(context.Background(), oauth2.HTTPClient, c.idpHTTP(t, nil)))
	if err != nil {
		t.Fatalf("token of %s: %v", clientID, err)
	}
	return tok.AccessToken
}

// staffUser is a member of the provider's directory (idp/users.yaml).
type staffUser struct {
	Username string   `yaml:"username"`
	Password string   `yaml:"password"`
	Groups   []string `yaml:"groups"`
}

func (c cluster) usersFile() string { return filepath.Join(c.dir, "idp", "users.yaml") }

func (c cluster) directory(t *testing.T) []staffUser {
	t.Helper()
	b, err := os.ReadFile(c.usersFile())
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Users []staffUser `yaml:"users"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Users
}

func (c cluster) user(t *testing.T, name string) staffUser {
	t.Helper()
	for _, u := range c.directory(t) {
		if u.Username == name {
			return u
		}
	}
	t.Fatalf("no user %s in %s", name, c.usersFile())
	return staffUser{}
}

// staffToken signs username in as a browser would, on the provider's own
// login page (authorization code with PKCE, the Web UI's client), and
// returns the access token: what the Web UI forwards for its staff member.
func (c cluster) staffToken(t *testing.T, username string) string {
	t.Helper()
	tok, err := c.signIn(t, username, c.user(t, username).Password)
	if err != nil {
		t.Fatalf("sign-in of %s: %v", username, err)
	}
	return tok
}

func (c cluster) signIn(t *testing.T, username, password string) (string, error) {
	t.Helper()
	redirect := "http://localhost:" + strings.TrimPrefix(c.port(t, 15), "127.0.0.1:") + "/auth/sso/callback"
	cfg := oauth2.Config{ClientID: "cartwright-web-ui", ClientSecret: c.secret(t, "cartwright-web-ui"),
		Endpoint:    oauth2.Endpoint{AuthURL: c.issuer(t) + "/oauth2/auth", TokenURL: c.issuer(t) + "/oauth2/token"},
		RedirectURL: redirect, Scopes: []string{"openid"}}
	verifier := oauth2.GenerateVerifier()
	state := randomString(t)
	jar, _ := cookiejar.New(nil)
	var code string
	hc := c.idpHTTP(t, jar)
	hc.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirect) {
			code = r.URL.Query().Get("code")
			if r.URL.Query().Get("state") != state {
				return errors.New("state changed on the way")
			}
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, err := hc.Get(cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("nonce", randomString(t))))
	if err != nil {
		return "", err
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	challenge := resp.Request.URL.Query().Get("login_challenge")
	if challenge == "" {
		return "", fmt.Errorf("no login page: %s %s", resp.Request.URL, page)
	}
	resp, err = hc.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/login",
		url.Values{"challenge": {challenge}, "username": {username}, "password": {password}})
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code == "" {
		return "", fmt.Errorf("no code: %s %s", resp.Status, body)
	}
	tok, err := cfg.Exchange(context.WithValue(context.Background(), oauth2.HTTPClient, c.idpHTTP(t, nil)), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

func randomString(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// dialAs is an SDK client with the cluster's client certificate and token
// ("" sends none).
func (c cluster) dialAs(t *testing.T, token string) sdkclient.Client {
	t.Helper()
	var creds sdkclient.Credentials
	if token != "" {
		creds = sdkclient.NewAPIKeyStaticCredentials(token)
	}
	return c.dialWith(t, creds)
}

// dialWith is an SDK client with the cluster's client certificate and creds.
func (c cluster) dialWith(t *testing.T, creds sdkclient.Credentials) sdkclient.Client {
	t.Helper()
	opts := sdkclient.Options{HostPort: c.address, Namespace: "default", Logger: quiet{}, Credentials: creds,
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: &tls.Config{RootCAs: c.pool(t, "ca"),
			ServerName: "temporal-frontend", Certificates: []tls.Certificate{c.keyPair(t, "client")}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tc, err := sdkclient.DialContext(ctx, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(tc.Close)
	return tc
}

// claims reads a token's payload (the tests' own look; the frontend
// verifies).
func claims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jwtHeader(t *testing.T, token string) map[string]any {
	t.Helper()
	h, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// signRS256 is the forger's JWT: the claims, signed with a key of its own
// under the provider's key id.
func signRS256(t *testing.T, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(map[string]any{"alg": "RS256", "typ": "JWT", "kid": kid}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// setLifespan sets the access-token lifespan of the Web UI's client in the
// provider ("" restores the provider's default).
func setLifespan(t *testing.T, c cluster, d string) {
	t.Helper()
	var v any
	if d != "" {
		v = d
	}
	body, _ := json.Marshal(map[string]any{"authorization_code_grant_access_token_lifespan": v})
	req, err := http.NewRequest(http.MethodPut, c.idpAdmin(t)+"/admin/clients/cartwright-web-ui/lifespans", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("lifespans of cartwright-web-ui: %s %s", resp.Status, b)
	}
}
