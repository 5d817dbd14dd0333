package scaletest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// pki is a throwaway CA with a server and a client certificate, as PEM
// files in a test directory.
type pki struct {
	ca                     *x509.Certificate
	caKey                  *ecdsa.PrivateKey
	pool                   *x509.CertPool
	CAPath                 string
	server                 tls.Certificate
	ClientCert, ClientKey  string
	dir                    string
	serverName, clientName string
}

func newPKI(t *testing.T, serverName, clientName string) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), serverName: serverName, clientName: clientName}
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cartwright test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caKey = caKey
	p.pool = x509.NewCertPool()
	p.pool.AddCert(p.ca)
	p.CAPath = p.writePEM(t, "ca.pem", "CERTIFICATE", der)

	// The server's certificate names only a DNS name, never 127.0.0.1:
	// the handshake passes only if the client verifies against
	// TEMPORAL_TLS_SERVER_NAME, as a client of Temporal Cloud behind a
	// private endpoint must.
	sDER, sKey := p.issue(t, 2, serverName, x509.ExtKeyUsageServerAuth, []string{serverName})
	p.server = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	cDER, cKey := p.issue(t, 3, clientName, x509.ExtKeyUsageClientAuth, nil)
	p.ClientCert = p.writePEM(t, "client.pem", "CERTIFICATE", cDER)
	keyDER, err := x509.MarshalECPrivateKey(cKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ClientKey = p.writePEM(t, "client.key", "EC PRIVATE KEY", keyDER)
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *pki) issue(t *testing.T, serial int64, cn string, usage x509.ExtKeyUsage, dns []string) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

func (p *pki) writePEM(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tlsFront terminates TLS in front of a plaintext Temporal frontend, as
// Temporal Cloud's edge does: a client must present a certificate of the
// CA (mTLS) or an API key (authorization: Bearer …, seen in the HTTP/2
// headers once TLS is off); a connection with neither is closed before
// its first request reaches the server. It records who connected.
type tlsFront struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []frontConn
	failed []string
}

// frontConn is one accepted connection: the client certificate's common
// name ("" without one) and the authorization headers it sent.
type frontConn struct {
	ClientCN      string
	Authorization []string
	Refused       bool
}

func startTLSFront(t *testing.T, p *pki, target string) *tlsFront {
	t.Helper()
	cfg := &tls.Config{
		Certificates: []tls.Certificate{p.server}, ClientCAs: p.pool,
		ClientAuth: tls.VerifyClientCertIfGiven, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12,
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &tlsFront{ln: ln, target: target}
	go f.serve()
	t.Cleanup(func() { _ = ln.Close() })
	return f
}

func (f *tlsFront) Addr() string { return f.ln.Addr().String() }

func (f *tlsFront) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.handle(c.(*tls.Conn))
	}
}

func (f *tlsFront) handle(c *tls.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := c.Handshake(); err != nil {
		f.mu.Lock()
		f.failed = append(f.failed, err.Error())
		f.mu.Unlock()
		return
	}
	_ = c.SetDeadline(time.Time{})
	var fc frontConn
	if certs := c.ConnectionState().PeerCertificates; len(certs) > 0 {
		fc.ClientCN = certs[0].Subject.CommonName
	}
	idx := f.record(fc)
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	if _, err := up.Write(preface); err != nil {
		return
	}
	// Every byte read from the client is forwarded as the framer reads it;
	// the framer decodes headers only to look at them.
	fr := http2.NewFramer(io.Discard, io.TeeReader(c, up))
	fr.SetMaxReadFrameSize(1 << 24)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	for {
		frame, err := fr.ReadFrame()
		if err != nil {
			return
		}
		mh, ok := frame.(*http2.MetaHeadersFrame)
		if !ok {
			continue
		}
		auth := ""
		for _, h := range mh.Fields {
			if h.Name == "authorization" {
				auth = h.Value
			}
		}
		if !f.addAuth(idx, auth) {
			return // neither certificate nor key: closed
		}
	}
}

func (f *tlsFront) record(fc frontConn) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns = append(f.conns, fc)
	return len(f.conns) - 1
}

// addAuth records a request's authorization header and reports whether
// the request may pass: with a client certificate always, else only with
// a key.
func (f *tlsFront) addAuth(idx int, auth string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &f.conns[idx]
	if auth != "" {
		c.Authorization = append(c.Authorization, auth)
	}
	if c.ClientCN == "" && auth == "" {
		c.Refused = true
		return false
	}
	return true
}

func (f *tlsFront) snapshot() ([]frontConn, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]frontConn(nil), f.conns...), append([]string(nil), f.failed...)
}
