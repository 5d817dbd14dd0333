package scaletest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client/codec/codectest"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce/quotesealtest"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support/sealtest"
)

const (
	tlsServerName = "temporal.cartwright.test"
	workerCN      = "cartwright-worker"
	testAPIKey    = "cw-test-api-key-0123456789"
)

// TestTLSFromEnvironment proves the TLS paths of the TEMPORAL_* environment
// configuration (client.SDKOptionsFromEnv) against a TLS endpoint: the
// worker binary connects with mTLS (TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH,
// the server's CA and name), a backend client with an API key over TLS
// (TEMPORAL_API_KEY), and one draft order runs end to end across both. A
// client trusting another CA, or bringing neither certificate nor key,
// does not get in.
//
// The CLI's dev server (v1.5.1) cannot serve TLS (its start-dev has no TLS
// flags; temporalcli/devserver/server.go: "the dev server doesn't support
// TLS"), so the TLS endpoint is a TLS-terminating front (tlsFront) on
// 127.0.0.1 before the test stack's dev server, checking certificates and
// keys the way Temporal Cloud's edge does.
func TestTLSFromEnvironment(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(5*time.Minute))
	defer cancel()
	p := newPKI(t, tlsServerName, workerCN)
	front := startTLSFront(t, p, testenv.TemporalAddress())

	dsn := testenv.Database(t)
	tq := testenv.TaskQueue(t)
	w := startWorker(t, "tls", "workflows,activities", map[string]string{
		"TEMPORAL_ADDRESS": front.Addr(), "TEMPORAL_NAMESPACE": "default",
		"TEMPORAL_TLS_CLIENT_CERT_PATH": p.ClientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH": p.ClientKey,
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH": p.CAPath, "TEMPORAL_TLS_SERVER_NAME": tlsServerName,
		"CARTWRIGHT_TASK_QUEUE": tq, "CARTWRIGHT_PG_DSN": dsn, "CARTWRIGHT_PG_MAX_CONNS": "8",
		"CARTWRIGHT_EVIDENCE_KEY": evidencetest.Key(), "CARTWRIGHT_EVIDENCE_KEY_ID": evidencetest.KeyID,
		"CARTWRIGHT_PAYLOAD_KEYS": codectest.Spec(), "CARTWRIGHT_SEAL_KEYS": sealtest.Spec(),
		"CARTWRIGHT_QUOTE_SEAL_KEYS":        quotesealtest.Spec(),
		"CARTWRIGHT_WORKER_SIGNING_KEYS":    evidencetest.WorkerSigningRing,
		"CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS": evidencetest.WorkerPublicRing, "CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS": evidencetest.GatewayPublicRing,
		"STRIPE_API_BASE": testenv.StripeAPIBase(), "CARTWRIGHT_LOG_LEVEL": "warn",
	})
	w.waitReady(t, 2*time.Minute)

	// The backend: an API key over TLS, no client certificate.
	t.Setenv("TEMPORAL_ADDRESS", front.Addr())
	t.Setenv("TEMPORAL_NAMESPACE", "default")
	t.Setenv("CARTWRIGHT_PAYLOAD_KEYS", codectest.Spec())
	t.Setenv("TEMPORAL_API_KEY", testAPIKey)
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", p.CAPath)
	t.Setenv("TEMPORAL_TLS_SERVER_NAME", tlsServerName)
	cl, err := client.New(ctx, envOptions(t, tq))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	id, err := driveOrder(ctx, cl, "tls-"+randomHex(8))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("draft order %s completed over TLS", id)

	conns, _ := front.snapshot()
	var workerConns, keyRequests int
	for _, c := range conns {
		switch {
		case c.ClientCN == workerCN:
			workerConns++
		case c.ClientCN == "":
			for _, a := range c.Authorization {
				if a != "Bearer "+testAPIKey {
					t.Fatalf("authorization header %q, want the configured key", a)
				}
				keyRequests++
			}
		default:
			t.Fatalf("connection with unexpected client certificate %q", c.ClientCN)
		}
	}
	if workerConns == 0 || keyRequests == 0 {
		t.Fatalf("%d mTLS worker connections, %d API-key requests: want both (%+v)", workerConns, keyRequests, conns)
	}

	// Refused: another CA (the handshake fails on the client), and
	// neither certificate nor key (the front closes the connection).
	other := newPKI(t, tlsServerName, "intruder")
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", other.CAPath)
	if err := dialFails(ctx); err == nil {
		t.Fatal("a client trusting another CA connected")
	} else if !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("wrong CA: %v, want a certificate verification failure", err)
	}
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", p.CAPath)
	t.Setenv("TEMPORAL_API_KEY", "")
	t.Setenv("TEMPORAL_TLS", "true")
	if err := dialFails(ctx); err == nil {
		t.Fatal("a client with neither certificate nor API key connected")
	} else {
		t.Logf("neither certificate nor key: %v", err)
	}
	if _, failed := front.snapshot(); len(failed) == 0 {
		t.Fatal("the front saw no failed handshake from the client trusting another CA")
	}
}

// dialFails connects with the environment as it is now and returns the
// error (nil if it connected).
func dialFails(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	opts, err := client.OptionsFromEnv()
	if err != nil {
		return err
	}
	c, err := client.New(ctx, opts)
	if err == nil {
		c.Close()
	}
	return err
}

// envOptions are the client options of the environment the test set up
// (client.New itself reads no environment), on task queue queue.
func envOptions(t *testing.T, queue string) client.Options {
	t.Helper()
	// The test stacks' payload key ring, as the workers under test hold.
	t.Setenv("CARTWRIGHT_PAYLOAD_KEYS", codectest.Spec())
	opts, err := client.OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	opts.TaskQueue = queue
	return opts
}
