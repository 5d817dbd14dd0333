package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// PGBin is where Debian's PostgreSQL 15 server binaries live.
const PGBin = "/usr/lib/postgresql/15/bin"

// Cluster is a throwaway PostgreSQL cluster a fault test may stop and start
// without disturbing anyone else's database (the shared stack's PostgreSQL
// on :5432 must never be stopped). Superuser "postgres", trust auth, on a
// free port of 127.0.0.1.
type Cluster struct {
	t    testing.TB
	dir  string
	Port int
}

// StartPrivateCluster initialises and starts a cluster owned by the postgres
// OS user, removed when t ends. It skips t when not root or when PostgreSQL
// is not installed.
func StartPrivateCluster(t testing.TB) *Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("fault test: needs root to run a private PostgreSQL cluster as the postgres user")
	}
	if _, err := os.Stat(filepath.Join(PGBin, "initdb")); err != nil {
		t.Skipf("fault test: %s/initdb not found", PGBin)
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("fault test: no postgres OS user: %v", err)
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	dir, err := os.MkdirTemp("", "cw-pg-fault-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, dir: dir, Port: FreePort(t)}
	c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	t.Cleanup(func() {
		_ = exec.Command("runuser", "-u", "postgres", "--", filepath.Join(PGBin, "pg_ctl"), "-D", c.data(), "-m", "immediate", "-w", "stop").Run()
		_ = os.RemoveAll(dir)
	})
	c.Start()
	return c
}

// FreePort returns a TCP port of 127.0.0.1 nobody listened on a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) run(tool string, args ...string) {
	c.t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(PGBin, tool)}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
	}
}

// Start starts the cluster and waits until it accepts connections.
func (c *Cluster) Start() {
	c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300", c.Port, c.dir), "start")
}

// Stop shuts the cluster down (fast: open connections are cut, as in an
// outage).
func (c *Cluster) Stop() { c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop") }

// DSN connects to dbname as the superuser.
func (c *Cluster) DSN(dbname string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", c.Port, dbname)
}
