package testenv

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ClusterEnv loads the environment file scripts/cluster.sh wrote for a
// Temporal cluster (docs/operators.md#a-temporal-cluster-make-cluster) into
// t's environment (t.Setenv: the test must not be parallel) and returns it.
// The file is CARTWRIGHT_CLUSTER_ENV, else $CARTWRIGHT_CLUSTER_DIR/env; the
// test is skipped when neither is set (`make test-cluster` sets it).
func ClusterEnv(t *testing.T) map[string]string {
	t.Helper()
	Integration(t)
	path := os.Getenv("CARTWRIGHT_CLUSTER_ENV")
	if path == "" && os.Getenv("CARTWRIGHT_CLUSTER_DIR") != "" {
		path = filepath.Join(os.Getenv("CARTWRIGHT_CLUSTER_DIR"), "env")
	}
	if path == "" {
		t.Skip("cluster test: CARTWRIGHT_CLUSTER_ENV is not set (run it with make test-cluster)")
	}
	env, err := ReadEnvFile(path)
	if err != nil {
		t.Fatalf("cluster environment: %v (is the cluster up? make cluster)", err)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	return env
}

// ReadEnvFile parses the scripts' environment files: lines
// `export NAME='value'` (values never hold a quote), comments and blank
// lines.
func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		env[k] = strings.Trim(v, `'"`)
	}
	return env, sc.Err()
}
