package client

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"
)

// A call without an answer says what is down: history (or its
// PostgreSQL), matching, no worker, or a worker that does not answer;
// never "is a worker polling" when the server itself is the problem.
func TestNoAnswerSaysWhatIsDown(t *testing.T) {
	down := serviceerror.NewUnavailable("persistence: dial tcp 127.0.0.1:5432: connect: connection refused")
	for _, c := range []struct {
		name             string
		history, match   error
		pollers          int
		want, wantAbsent string
	}{
		{"history and its database", down, nil, 2, "history service does not answer", "worker"},
		{"matching", nil, errors.New("context deadline exceeded"), 0, "matching service does not answer", "no worker polls"},
		{"both", down, down, 0, "history and matching services do not answer", "no worker polls"},
		{"no worker", nil, nil, 0, `no worker polls task queue "cartwright"`, "PostgreSQL"},
		{"no such run is not an outage", serviceerror.NewNotFound("workflow not found"), nil, 0, "no worker polls", "history"},
		{"a stuck worker", nil, nil, 3, "3 worker(s) poll", "down"},
	} {
		got := whyNoAnswer(c.history, c.match, c.pollers, "cartwright")
		if !strings.Contains(got, c.want) || strings.Contains(got, c.wantAbsent) {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}

// A certificate of another CA reads as what it is, not as "broken pipe".
func TestTLSFailureSaysWhichCertificate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tls: failed to verify certificate: x509: certificate signed by unknown authority", "TEMPORAL_TLS_SERVER_CA_CERT_PATH"},
		{"write tcp 127.0.0.1:40000->127.0.0.1:7400: write: broken pipe", "does not accept our client certificate"},
		{"read tcp 127.0.0.1:40000->127.0.0.1:7400: read: connection reset by peer", "TEMPORAL_TLS_CLIENT_CERT_PATH"},
	} {
		got, ok := tlsWhy(c.in)
		if !ok || !strings.Contains(got, c.want) {
			t.Errorf("%q → %q", c.in, got)
		}
	}
	if _, ok := tlsWhy("dial tcp 127.0.0.1:7233: connect: connection refused"); ok {
		t.Error("a refused connection is not a TLS failure")
	}
}

// A token the program cannot fetch reads as the provider's problem, never
// as Temporal's TLS or a server that is not running.
func TestTokenFailureSaysItIsTheProvider(t *testing.T) {
	const url = "access token from https://127.0.0.1:7422/oauth2/token: "
	for _, c := range []struct{ in, want string }{
		{url + `Post "https://127.0.0.1:7422/oauth2/token": tls: failed to verify certificate: x509: certificate signed by unknown authority`, "CARTWRIGHT_OIDC_CA_FILE"},
		{url + `Post "https://127.0.0.1:7422/oauth2/token": dial tcp 127.0.0.1:7422: connect: connection refused`, "provider does not answer"},
		{url + `oauth2: "invalid_client" "Client authentication failed"`, "CARTWRIGHT_OIDC_CLIENT_ID"},
	} {
		got, ok := tokenWhy("failed reaching server: " + c.in)
		if !ok || !strings.Contains(got, c.want) || strings.Contains(got, "TEMPORAL_TLS") {
			t.Errorf("%q → %q", c.in, got)
		}
	}
	if _, ok := tokenWhy("dial tcp 127.0.0.1:7233: connect: connection refused"); ok {
		t.Error("a refused Temporal connection is not a token failure")
	}
}
