package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// `make cluster` on the shared PostgreSQL (max_connections 100, which
// every other stack uses too): the pools of its four Temporal services
// (store and visibility, from the configs it writes) and of cartwright's
// worker and MCP gateway (CARTWRIGHT_PG_MAX_CONNS each) stay within its
// share, and its log lines carry the time, so a restart's duration reads
// off its output (docs/operators.md#a-temporal-cluster-make-cluster).
func TestClusterStaysWithinThePostgresBudget(t *testing.T) {
	tmp := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script := `set -euo pipefail
. "` + root + `/scripts/lib.sh"
. "` + root + `/scripts/cluster-lib.sh"
load_cluster
for s in "${TEMPORAL_SERVICES[@]}"; do write_server_config "$s"; done
echo "app=$APP_CONNS"
log "budget checked"`
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "CLUSTER_DIR="+tmp, "CLUSTER_PG=shared")
	cmd.Env = append(cmd.Env, "CLUSTER_PG_CONNS=") // the default
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	total := 0
	m := regexp.MustCompile(`app=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no app budget in %q", out)
	}
	app, _ := strconv.Atoi(string(m[1]))
	total += 2 * app // the worker and the MCP gateway
	configs, _ := filepath.Glob(filepath.Join(tmp, "config", "*", "*.yaml"))
	if len(configs) != 4 {
		t.Fatalf("configs %v", configs)
	}
	for _, f := range configs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range regexp.MustCompile(`(?m)^\s*maxConns: (\d+)$`).FindAllSubmatch(b, -1) {
			n, _ := strconv.Atoi(string(c[1]))
			total += n
		}
	}
	if total == 0 || total > 100 {
		t.Errorf("the cluster's pools may open %d connections to a PostgreSQL of 100 shared by every stack", total)
	}
	if !regexp.MustCompile(`==> \d\d:\d\d:\d\d budget checked`).MatchString(stderr.String()) {
		t.Errorf("log lines carry no time: %q", stderr.String())
	}
}
