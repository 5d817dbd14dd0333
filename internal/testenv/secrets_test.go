package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The stack scripts (scripts/lib.sh) keep every dev secret owner-only:
// the env file that holds them all, the key and secret files, the folder.
// Run under `scripts/test.sh integration`, after `scripts/stack.sh test up`
// wrote the stack whose environment this test sees.
func TestStackSecretsAreOwnerOnly(t *testing.T) {
	Integration(t)
	if os.Getenv("CARTWRIGHT_INTEGRATION") == "" {
		t.Skip("needs the test stack's environment (scripts/test.sh integration loads it)")
	}
	dir := stackDir(t)
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		t.Errorf("%s is %v: others can list the stack's secrets", dir, info.Mode().Perm())
	}
	secrets := []string{filepath.Join(dir, "env")}
	for _, pat := range []string{"*.key", "*.secret", "*.token"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		secrets = append(secrets, m...)
	}
	if len(secrets) < 4 {
		t.Fatalf("only %v in %s: expected the env file, keys and secrets", secrets, dir)
	}
	for _, f := range secrets {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", f, info.Mode().Perm())
		}
	}
}

// stackDir is the .data folder whose env file is the environment this
// test runs in (its Temporal address and UI URL match).
func stackDir(t *testing.T) string {
	t.Helper()
	envs, _ := filepath.Glob("../../.data/*/env")
	want := []string{"TEMPORAL_ADDRESS='" + os.Getenv("TEMPORAL_ADDRESS") + "'", "CARTWRIGHT_UI_URL='" + os.Getenv("CARTWRIGHT_UI_URL") + "'"}
	for _, f := range envs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.Contains(string(b), want[0]) && strings.Contains(string(b), want[1]) {
			return filepath.Dir(f)
		}
	}
	t.Fatalf("no .data/*/env for this stack (%v) among %v", want, envs)
	return ""
}
