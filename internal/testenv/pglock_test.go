package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stub writes an executable shell script named name into dir.
func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The PostgreSQL a stack starts must not inherit the stacks' lock
// descriptors: a postgres holding fd 7 (the shared hold on the machine's
// PostgreSQL users lock) or 9 (stack.lock) keeps them for its lifetime, so
// `make down` finds the cluster "still used by another stack" and leaves
// it running (scripts/lib.sh, without_locks). ensure_postgres_running is
// run as stack_up runs it — after hold_postgres, with stack.lock open —
// and pg_ctlcluster (a stub, as are pg_isready and pg_lsclusters) records
// the descriptors it was started with.
func TestPostgresStartsWithoutTheStackLocks(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("needs flock(1)")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub(t, bin, "pg_isready", `[ -f "$STUB_DIR/started" ]`)
	stub(t, bin, "pg_lsclusters", `echo "16 main 59999 down postgres /tmp/x /tmp/x.log"`)
	stub(t, bin, "pg_ctlcluster", `ls /proc/$$/fd >"$STUB_DIR/fds"; touch "$STUB_DIR/started"`)
	lib, err := filepath.Abs("../../scripts/lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := `set -euo pipefail
. "` + lib + `"
as_root() { "$@"; }
PG_PORT=59999 PID_DIR="$STUB_DIR/pids" PG_USERS_LOCK="$STUB_DIR/users.lock"
hold_postgres
exec 9>"$STUB_DIR/stack.lock"
ensure_postgres_running`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "STUB_DIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ensure_postgres_running: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(tmp, "fds"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range strings.Fields(string(raw)) {
		if fd == "6" || fd == "7" || fd == "8" || fd == "9" {
			t.Errorf("pg_ctlcluster inherited the stack's lock descriptor %s (open: %s)", fd, strings.Join(strings.Fields(string(raw)), " "))
		}
	}
}
