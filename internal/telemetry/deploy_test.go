package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestComposeScrapesWhatProcessesServe checks the observability half of
// docker-compose.yml offline (no Docker engine here): Prometheus and
// Grafana mount files that exist, every Prometheus target is a service
// serving /metrics on that port, and Grafana's datasource is the one the
// dashboard names.
func TestComposeScrapesWhatProcessesServe(t *testing.T) {
	root := "../.."
	var compose struct {
		Services map[string]struct {
			Entrypoint  []string          `yaml:"entrypoint"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
		} `yaml:"services"`
	}
	readYAML(t, filepath.Join(root, "docker-compose.yml"), &compose)

	for _, name := range []string{"prometheus", "grafana"} {
		svc, ok := compose.Services[name]
		if !ok {
			t.Fatalf("docker-compose.yml has no %s service", name)
		}
		for _, v := range svc.Volumes {
			host, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(host, "./") {
				continue // a named volume
			}
			if _, err := os.Stat(filepath.Join(root, host)); err != nil {
				t.Errorf("%s mounts %s: %v", name, host, err)
			}
		}
	}

	var prom struct {
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, filepath.Join(root, "deploy/prometheus/prometheus.yml"), &prom)
	n := 0
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				n++
				host, port, _ := strings.Cut(target, ":")
				svc, ok := compose.Services[host]
				if !ok {
					t.Errorf("Prometheus scrapes %s: no such service", target)
					continue
				}
				// The worker serves CARTWRIGHT_METRICS_ADDR, the gateway
				// (`starter mcp serve`) CARTWRIGHT_MCP_METRICS_ADDR.
				key := "CARTWRIGHT_METRICS_ADDR"
				if strings.Contains(strings.Join(svc.Entrypoint, " "), "mcp serve") {
					key = "CARTWRIGHT_MCP_METRICS_ADDR"
				}
				if addr := svc.Environment[key]; !strings.HasSuffix(addr, ":"+port) {
					t.Errorf("Prometheus scrapes %s, but the service serves /metrics on %s=%q", target, key, addr)
				}
			}
		}
	}
	if n < 2 {
		t.Errorf("Prometheus scrapes %d targets, want the worker and the gateway", n)
	}

	var ds struct {
		Datasources []struct {
			UID string `yaml:"uid"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(root, "deploy/grafana/provisioning/datasources/prometheus.yaml"), &ds)
	dash, err := os.ReadFile(filepath.Join(root, "deploy/grafana/dashboards/cartwright.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Datasources) != 1 || !strings.Contains(string(dash), `"uid": "`+ds.Datasources[0].UID+`"`) {
		t.Errorf("the dashboard does not use the provisioned datasource %+v", ds.Datasources)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
