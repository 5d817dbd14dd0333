package config_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// secrets are every variable that grants something: a database login, a
// key, a shared secret, a bearer token. A process holding one it does not
// need is what TestProcessesHoldOnlyTheirKeys refuses.
var secrets = []string{
	"CARTWRIGHT_PG_DSN", "CARTWRIGHT_PG_OWNER_DSN", "CARTWRIGHT_PG_ISSUER_DSN", "CARTWRIGHT_TEST_PG_DSN",
	"CARTWRIGHT_CLUSTER_PG_ADMIN_DSN", "CARTWRIGHT_EVIDENCE_KEY", "CARTWRIGHT_PAYLOAD_KEYS", "CARTWRIGHT_SEAL_KEYS",
	"CARTWRIGHT_QUOTE_SEAL_KEYS", "CARTWRIGHT_CODEC_SECRET", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET",
	"CARTWRIGHT_MCP_TOKEN", "CARTWRIGHT_STAFF_TOKEN", "TEMPORAL_API_KEY",
	"CARTWRIGHT_WORKER_SIGNING_KEYS", "CARTWRIGHT_GATEWAY_SIGNING_KEYS",
}

// holds is the table of docs/operators.md#keys-and-grants-per-process: what
// each process (a worker by its roles: it builds only what they serve,
// wiring.BuildFor) may hold.
var holds = map[string][]string{
	"workflows":  {"CARTWRIGHT_PG_DSN", "CARTWRIGHT_EVIDENCE_KEY", "CARTWRIGHT_PAYLOAD_KEYS", "CARTWRIGHT_SEAL_KEYS", "CARTWRIGHT_QUOTE_SEAL_KEYS", "STRIPE_SECRET_KEY", "TEMPORAL_API_KEY", "CARTWRIGHT_WORKER_SIGNING_KEYS"},
	"activities": {"CARTWRIGHT_PG_DSN", "CARTWRIGHT_EVIDENCE_KEY", "CARTWRIGHT_PAYLOAD_KEYS", "CARTWRIGHT_SEAL_KEYS", "CARTWRIGHT_QUOTE_SEAL_KEYS", "STRIPE_SECRET_KEY", "TEMPORAL_API_KEY", "CARTWRIGHT_WORKER_SIGNING_KEYS"},
	"webhook":    {"CARTWRIGHT_PG_DSN", "CARTWRIGHT_PAYLOAD_KEYS", "STRIPE_WEBHOOK_SECRET", "TEMPORAL_API_KEY"},
	"schedules":  {"CARTWRIGHT_PG_DSN", "CARTWRIGHT_PAYLOAD_KEYS", "TEMPORAL_API_KEY"},
	"codec":      {"CARTWRIGHT_PG_DSN", "CARTWRIGHT_PAYLOAD_KEYS", "CARTWRIGHT_SEAL_KEYS", "CARTWRIGHT_CODEC_SECRET", "TEMPORAL_API_KEY"},
	// The MCP gateway: a Temporal client (payload keys), the runtime role
	// (its tokens, direct reads' evidence), the evidence key (a direct
	// read's raw output is sealed at rest) and Stripe (direct reads of
	// account status). No seal ring of either kind, no codec secret.
	"gateway": {"CARTWRIGHT_PG_DSN", "CARTWRIGHT_EVIDENCE_KEY", "CARTWRIGHT_PAYLOAD_KEYS", "STRIPE_SECRET_KEY", "TEMPORAL_API_KEY", "CARTWRIGHT_GATEWAY_SIGNING_KEYS"},
	"migrate": {"CARTWRIGHT_PG_OWNER_DSN"},
}

// needs are what a process of a table row cannot start or verify without:
// the row-signing ring of its writer (docs/evidence.md#draft-row-signatures;
// only its own, holds keeps the other's out) and both writers' public rings
// (no secret). TestProcessesHoldOnlyTheirKeys fails a process lacking one.
var needs = map[string][]string{
	"workflows":  {"CARTWRIGHT_WORKER_SIGNING_KEYS", "CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS", "CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS"},
	"activities": {"CARTWRIGHT_WORKER_SIGNING_KEYS", "CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS", "CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS"},
	"gateway":    {"CARTWRIGHT_GATEWAY_SIGNING_KEYS", "CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS", "CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS"},
}

// checkNeeds fails t for every variable the rows need that env lacks.
func checkNeeds(t *testing.T, where string, env []string, rows ...string) {
	t.Helper()
	var missing []string
	for _, r := range rows {
		for _, k := range needs[r] {
			if !slices.Contains(env, k) && !slices.Contains(missing, k) {
				missing = append(missing, k)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s lacks %v, which it needs (docs/operators.md#keys-and-grants-per-process)", where, missing)
	}
}

// mayHold is what a process of these table rows may hold.
func mayHold(rows ...string) map[string]bool {
	out := map[string]bool{}
	for _, r := range rows {
		v, ok := holds[r]
		if !ok {
			panic("no row " + r)
		}
		for _, k := range v {
			out[k] = true
		}
	}
	return out
}

// check fails t for every secret of env that allowed does not name.
func check(t *testing.T, where string, env []string, allowed map[string]bool) {
	t.Helper()
	var extra []string
	for _, k := range env {
		if slices.Contains(secrets, k) && !allowed[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("%s holds %v, which it does not need (docs/operators.md#keys-and-grants-per-process)", where, extra)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestProcessesHoldOnlyTheirKeys reads each process's environment in every
// form cartwright is deployed in and fails when one holds a secret its row
// of the table does not name: the files make dev and make cluster start
// the worker and the gateway from (written by scripts/lib.sh itself, into
// a folder of the test's own), docker-compose.yml's services, and the Helm
// chart rendered with each of its values files.
func TestProcessesHoldOnlyTheirKeys(t *testing.T) {
	root := repoRoot(t)
	t.Run("make dev", func(t *testing.T) {
		dir := t.TempDir()
		envs := scriptEnvs(t, root, fmt.Sprintf(`load_profile dev
			DATA_DIR=%q ENV_FILE=%q/env
			write_env`, dir, dir), dir)
		check(t, "make dev's worker", envs["worker"], mayHold("workflows", "activities", "webhook", "schedules", "codec"))
		check(t, "make dev's MCP gateway", envs["gateway"], mayHold("gateway"))
		checkNeeds(t, "make dev's worker", envs["worker"], "workflows", "activities")
		checkNeeds(t, "make dev's MCP gateway", envs["gateway"], "gateway")
	})
	t.Run("make cluster", func(t *testing.T) {
		dir := t.TempDir()
		envs := scriptEnvs(t, root, fmt.Sprintf(`. %q/scripts/cluster-lib.sh
			CLUSTER_DIR=%q CLUSTER_PORT_BASE=7590 CLUSTER_PG=shared
			load_cluster
			write_cluster_env`, root, dir), dir)
		check(t, "make cluster's worker", envs["worker"], mayHold("workflows", "activities", "webhook", "schedules", "codec"))
		check(t, "make cluster's MCP gateway", envs["gateway"], mayHold("gateway"))
		checkNeeds(t, "make cluster's worker", envs["worker"], "workflows", "activities")
		checkNeeds(t, "make cluster's MCP gateway", envs["gateway"], "gateway")
	})
	t.Run("scripts know every secret", func(t *testing.T) {
		// A secret scripts/lib.sh does not list would reach every process.
		out, err := exec.Command("bash", "-c", fmt.Sprintf(`. %q/scripts/lib.sh && echo "${SECRET_VARS[*]}"`, root)).Output()
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(string(out))
		want := slices.Clone(secrets)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("scripts/lib.sh SECRET_VARS = %v, want %v", got, want)
		}
	})
	t.Run("scripts start each process from its own file", func(t *testing.T) {
		// Every line that starts the worker or the gateway sources that
		// process's file, never the operator's .data/env.
		starts := regexp.MustCompile(`start_bg (worker|cartwright-worker|mcp) `)
		n := 0
		for _, f := range []string{"scripts/dev.sh", "scripts/cluster-lib.sh"} {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				m := starts.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				n++
				want := `. "$DATA_DIR/worker.env"`
				if m[1] == "mcp" {
					want = `. "$DATA_DIR/gateway.env"`
				}
				if !strings.Contains(line, want) {
					t.Errorf("%s:%d starts %s without %s: %s", f, i+1, m[1], want, strings.TrimSpace(line))
				}
			}
		}
		if n < 4 {
			t.Errorf("found %d process starts in the scripts, want the worker and the gateway of make dev and make cluster", n)
		}
	})
	t.Run("docker-compose.yml", func(t *testing.T) {
		var compose struct {
			Services map[string]struct {
				Environment map[string]string `yaml:"environment"`
			} `yaml:"services"`
		}
		b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &compose); err != nil {
			t.Fatal(err)
		}
		for name, rows := range map[string][]string{
			"worker": {"workflows", "activities", "webhook", "schedules", "codec"},
			"mcp":    {"gateway"}, "migrate": {"migrate"},
		} {
			svc, ok := compose.Services[name]
			if !ok {
				t.Fatalf("docker-compose.yml has no service %s", name)
			}
			check(t, "compose service "+name, keys(svc.Environment), mayHold(rows...))
			checkNeeds(t, "compose service "+name, keys(svc.Environment), rows...)
		}
	})
	t.Run("helm chart", func(t *testing.T) {
		helm := filepath.Join(root, ".bin", "helm")
		if _, err := os.Stat(helm); err != nil {
			t.Skipf("no %s (make tools)", helm)
		}
		chart := filepath.Join(root, "deploy/helm/cartwright")
		files, err := filepath.Glob(filepath.Join(chart, "values-*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ci, _ := filepath.Glob(filepath.Join(chart, "ci", "*.yaml"))
		gateways := 0
		for _, f := range append(files, ci...) {
			out, err := exec.Command(helm, "template", "cw", chart, "--kube-version", "1.33.4", "-f", f).CombinedOutput()
			if err != nil {
				t.Fatalf("helm template -f %s: %v\n%s", f, err, out)
			}
			for _, c := range renderedContainers(t, out) {
				where := fmt.Sprintf("%s (%s, container %s)", c.workload, filepath.Base(f), c.name)
				switch {
				case c.component == "gateway":
					gateways++
					check(t, where, c.env, mayHold("gateway"))
					checkNeeds(t, where, c.env, "gateway")
				case c.kind == "Job":
					check(t, where, c.env, mayHold("migrate"))
				default:
					var rows []string
					for _, r := range strings.Split(c.value("CARTWRIGHT_WORKER_ROLES"), ",") {
						rows = append(rows, strings.TrimSpace(r))
					}
					check(t, where, c.env, mayHold(rows...))
					checkNeeds(t, where, c.env, rows...)
				}
			}
		}
		if gateways == 0 {
			t.Error("no rendering had a gateway container")
		}
	})
}

// scriptEnvs runs script after sourcing scripts/lib.sh, then reads the
// variables each process file in dir exports.
func scriptEnvs(t *testing.T, root, script, dir string) map[string][]string {
	t.Helper()
	cmd := exec.Command("bash", "-c", fmt.Sprintf("set -euo pipefail\n. %q/scripts/lib.sh\n%s", root, script))
	cmd.Env = append(os.Environ(), "STACK_TEMPORAL_PORT=", "STACK_UI_PORT=", "STACK_STRIPE_PORT=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts: %v\n%s", err, out)
	}
	out := map[string][]string{}
	for _, p := range []string{"worker", "gateway"} {
		f, err := os.Open(filepath.Join(dir, p+".env"))
		if err != nil {
			t.Fatalf("the scripts wrote no %s.env: %v", p, err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, ok := strings.CutPrefix(sc.Text(), "export "); ok {
				k, _, _ = strings.Cut(k, "=")
				out[p] = append(out[p], k)
			}
		}
		_ = f.Close()
		if !slices.Contains(out[p], "CARTWRIGHT_PG_DSN") || !slices.Contains(out[p], "CARTWRIGHT_PAYLOAD_KEYS") {
			t.Fatalf("%s.env lacks what every process needs: %v", p, out[p])
		}
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

type container struct {
	kind, workload, component, name string
	env                             []string
	values                          map[string]string
}

func (c container) value(k string) string { return c.values[k] }

// renderedContainers are the containers of every Deployment and Job of a
// helm template output, with the names of their environment variables.
func renderedContainers(t *testing.T, out []byte) []container {
	t.Helper()
	type envVar struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	}
	var res []container
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name   string            `yaml:"name"`
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Name string   `yaml:"name"`
							Env  []envVar `yaml:"env"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind != "Deployment" && doc.Kind != "Job" {
			continue
		}
		for _, c := range doc.Spec.Template.Spec.Containers {
			ct := container{kind: doc.Kind, workload: doc.Kind + " " + doc.Metadata.Name,
				component: doc.Metadata.Labels["app.kubernetes.io/component"], name: c.Name, values: map[string]string{}}
			for _, e := range c.Env {
				ct.env = append(ct.env, e.Name)
				ct.values[e.Name] = e.Value
			}
			res = append(res, ct)
		}
	}
	if len(res) == 0 {
		t.Fatal("helm template rendered no Deployment or Job")
	}
	return res
}
