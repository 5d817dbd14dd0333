package keyring

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

var spec = Spec{Prefix: "test", Noun: "test key", KeysVar: "TEST_KEYS", IDVar: "TEST_KEY_ID",
	MinBytes: 32, MaxBytes: 32, IDForbidden: ".", Unset: "nothing works without it"}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func TestParsePicksTheCurrentKeyAndLooksKeysUp(t *testing.T) {
	a, b := base64.StdEncoding.EncodeToString(key('a')), base64.RawURLEncoding.EncodeToString(key('b'))
	r, err := spec.Parse(" k1:"+a+" ,, k2:"+b+",", "")
	if err != nil {
		t.Fatal(err)
	}
	if id, k := r.Current(); id != "k1" || !bytes.Equal(k, key('a')) {
		t.Fatalf("current = %s %x, want the first key", id, k)
	}
	if k, ok := r.Key("k2"); !ok || !bytes.Equal(k, key('b')) {
		t.Fatalf("k2 = %x %v", k, ok)
	}
	if _, ok := r.Key("k3"); ok {
		t.Fatal("k3 found")
	}
	if r2, err := spec.Parse("k1:"+a+",k2:"+b, "k2"); err != nil || r2.CurrentID() != "k2" || strings.Join(r2.IDs(), ",") != "k1,k2" {
		t.Fatalf("ring %v, %v", r2, err)
	}
	if got := r.String(); strings.Contains(got, a) || got != "current=k1 keys=k1,k2" {
		t.Fatalf("String() = %q", got)
	}
}

// A hostile or mistaken configuration is refused, and the refusal names
// the variable and key id but never quotes key material.
func TestParseRefusesBadRingsWithoutQuotingKeys(t *testing.T) {
	k := base64.StdEncoding.EncodeToString(key('s'))
	short := base64.StdEncoding.EncodeToString([]byte("short"))
	for _, c := range []struct{ text, current, want string }{
		{"", "", "TEST_KEYS is not set"},
		{" , ", "", "TEST_KEYS is not set"},
		{k, "", "TEST_KEYS entry 1 is not id:base64key"},
		{"k1:" + k + "," + k, "", "TEST_KEYS entry 2 is not id:base64key"},
		{"k1:!!" + k, "", `test key "k1": not base64`},
		{"k1:" + short, "", `test key "k1" has 5 bytes, needs 32`},
		{"k1:" + k + ",k1:" + k, "", `"k1" appears twice`},
		{"k1:" + k, "k9", `TEST_KEY_ID "k9" is not among the keys of TEST_KEYS (k1)`},
		{"with space:" + k, "", "must be non-empty"},
		{"k.1:" + k, "", "must be non-empty"},
	} {
		_, err := spec.Parse(c.text, c.current)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "test: ") {
			t.Errorf("Parse(%.12q…, %q) = %v, want %q", c.text, c.current, err, c.want)
		} else if strings.Contains(err.Error(), k[:8]) {
			t.Errorf("error quotes key material: %v", err)
		}
	}
}

func TestKeySizeBounds(t *testing.T) {
	atLeast := Spec{Prefix: "t", Noun: "k", KeysVar: "K", IDVar: "ID", MinBytes: 32}
	if _, err := atLeast.New("a", map[string][]byte{"a": make([]byte, 64)}); err != nil {
		t.Fatalf("a 64-byte key under a 32-byte minimum: %v", err)
	}
	if _, err := atLeast.New("a", map[string][]byte{"a": make([]byte, 31)}); err == nil || !strings.Contains(err.Error(), "needs at least 32") {
		t.Fatalf("a 31-byte key: %v", err)
	}
	if _, err := spec.New("a", map[string][]byte{"a": make([]byte, 33)}); err == nil || !strings.Contains(err.Error(), "needs 32") {
		t.Fatalf("a 33-byte key under an exact 32: %v", err)
	}
}

// The ring keeps its own copy: changing the caller's bytes later changes
// no key.
func TestNewCopiesKeys(t *testing.T) {
	raw := key('c')
	r, err := spec.New("c", map[string][]byte{"c": raw})
	if err != nil {
		t.Fatal(err)
	}
	raw[0] = 'x'
	if k, _ := r.Key("c"); !bytes.Equal(k, key('c')) {
		t.Fatal("the ring shares the caller's key bytes")
	}
}

func TestEmpty(t *testing.T) {
	for text, want := range map[string]bool{"": true, " , \t,": true, "a:b": false, ",a:b": false} {
		if Empty(text) != want {
			t.Errorf("Empty(%q) = %v", text, !want)
		}
	}
}
