package clustertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// selfSignedClient is a client certificate of a CA the attacker made: the
// same subject as the real one, signed by nobody the cluster trusts.
func selfSignedClient(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{Organization: []string{"cartwright cluster"}, CommonName: "cartwright-client"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// present sends kp whatever CAs the server asks for (Go's client would
// otherwise send no certificate the server cannot verify, and the test
// would only show "certificate required").
func present(kp tls.Certificate) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &kp, nil }
}

// tlsDialer dials TCP, then TLS when cfg is set.
type tlsDialer struct {
	addr string
	cfg  *tls.Config
}

func (d *tlsDialer) dial() (net.Conn, error) {
	if d.cfg == nil {
		return net.DialTimeout("tcp", d.addr, 5*time.Second)
	}
	cfg := d.cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", d.addr, cfg)
}

// quiet silences the SDK's logs of the refused dials.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
