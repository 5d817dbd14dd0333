// Package servicetoken is a program's own identity on Temporal
// (docs/operators.md#sign-in-on-the-cluster): its client-credentials client
// at the organisation's OpenID Connect provider gives it an access token,
// which every call to Temporal carries (the SDK's dynamic API-key
// credentials: "Authorization: Bearer …"). The token is fetched again a
// minute before it expires, so no call waits on an expired one.
package servicetoken

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/cartwright-dev/cartwright/internal/config"
)

// tokenEarly is how long before its expiry a token is replaced.
const tokenEarly = time.Minute

// TokenSource is the program's access-token source of o, refreshed before
// the token expires; nil when o names no client.
func TokenSource(o config.OIDCClient) (oauth2.TokenSource, error) {
	if o.TokenURL == "" {
		return nil, nil
	}
	secret, err := os.ReadFile(o.ClientSecretFile)
	if err != nil {
		return nil, fmt.Errorf("CARTWRIGHT_OIDC_CLIENT_SECRET_FILE: %w", err)
	}
	cc := &clientcredentials.Config{
		ClientID: o.ClientID, ClientSecret: strings.TrimSpace(string(secret)),
		TokenURL: o.TokenURL, Scopes: o.Scopes, AuthStyle: oauth2.AuthStyleInParams,
	}
	hc, err := HTTPClient(o.CAFile)
	if err != nil {
		return nil, err
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	fetch := tokenFunc(func() (*oauth2.Token, error) { return cc.Token(ctx) })
	return oauth2.ReuseTokenSourceWithExpiry(nil, fetch, tokenEarly), nil
}

type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// Func is the program's current access token, refreshed before it
// expires (what the SDK's dynamic API-key credentials call per request);
// nil when o names no client.
func Func(o config.OIDCClient) (func(context.Context) (string, error), error) {
	ts, err := TokenSource(o)
	if err != nil || ts == nil {
		return nil, err
	}
	return func(context.Context) (string, error) {
		t, err := ts.Token()
		if err != nil {
			return "", fmt.Errorf("access token from %s: %w", o.TokenURL, err)
		}
		return t.AccessToken, nil
	}, nil
}

// HTTPClient is the client for calls to the provider: the system's CAs,
// and caFile's too when set (CARTWRIGHT_OIDC_CA_FILE: a private CA such
// as make cluster's, trusted for these calls only, never for Temporal's).
func HTTPClient(caFile string) (*http.Client, error) {
	hc := &http.Client{Timeout: 10 * time.Second}
	if caFile == "" {
		return hc, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("CARTWRIGHT_OIDC_CA_FILE: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CARTWRIGHT_OIDC_CA_FILE %s: no PEM certificate in it", caFile)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	hc.Transport = t
	return hc, nil
}
