package evidence

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/toolkit"
)

func TestAESGCMRoundTripAndRotation(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	old, err := NewAESGCMFromBase64("k1", base64.StdEncoding.EncodeToString(k1))
	if err != nil {
		t.Fatal(err)
	}
	nonce, ct, err := old.Seal([]byte(`{"email":"a@b.example"}`), []byte("ev_A"))
	if err != nil || bytes.Contains(ct, []byte("a@b.example")) {
		t.Fatalf("seal: %v", err)
	}
	if _, err := old.Open("k1", nonce, ct, []byte("ev_B")); err == nil {
		t.Fatal("ciphertext opened under another snapshot id")
	}
	cur, _ := NewAESGCM("k2", k2)
	if _, err := cur.Open("k1", nonce, ct, []byte("ev_A")); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	if err := cur.AddKey("k1", k1); err != nil {
		t.Fatal(err)
	}
	if pt, err := cur.Open("k1", nonce, ct, []byte("ev_A")); err != nil || string(pt) != `{"email":"a@b.example"}` {
		t.Fatalf("open with rotated key ring: %q %v", pt, err)
	}
	if cur.KeyID() != "k2" {
		t.Fatalf("current key %s", cur.KeyID())
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString([]byte("short"))} {
		if _, err := NewAESGCMFromBase64("k", bad); err == nil {
			t.Fatalf("key %q accepted", bad)
		}
	}
}

func TestSnapshotIDs(t *testing.T) {
	pattern := regexp.MustCompile(`^ev_[0-9A-HJKMNP-TV-Z]{26}$`)
	now := time.Now()
	a, _ := NewSnapshotID(now)
	b, _ := NewSnapshotID(now.Add(time.Millisecond))
	if !pattern.MatchString(a) || !pattern.MatchString(b) || a == b || a[:13] > b[:13] {
		t.Fatalf("ids %s %s", a, b)
	}
	if h := HashUserID("u"); h == "u" || h != HashUserID("u") || HashUserID("") != "" || HashUserID("v") == h {
		t.Fatal("user id hashing")
	}
}

func TestDBErrorClassification(t *testing.T) {
	retry := []error{
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		&pgconn.PgError{Code: "08006"},
		&pgconn.PgError{Code: "40001"},
		fmt.Errorf("dial: %w", syscall.ECONNREFUSED),
		io.ErrUnexpectedEOF,
		errors.New("failed to connect to `host=127.0.0.1`: server error: FATAL: the database system is shutting down (SQLSTATE 57P03)"),
	}
	for _, err := range retry {
		got := dbError("op", err)
		if toolkit.CodeOf(got) != toolkit.UpstreamError || !toolkit.AsError(got).CanRetry || !errors.Is(got, err) {
			t.Errorf("%v: got %v, want retryable UPSTREAM_ERROR wrapping it", err, got)
		}
	}
	for _, err := range []error{&pgconn.PgError{Code: "23505"}, &pgconn.PgError{Code: "42601"}} {
		got := dbError("op", err)
		var te *toolkit.Error
		if errors.As(got, &te) || !errors.Is(got, err) {
			t.Errorf("%v: got %v, want a plain wrapped error", err, got)
		}
	}
}
