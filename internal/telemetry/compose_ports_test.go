package telemetry

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestComposePublishesOnLoopbackOnly: docker-compose.yml is a laptop's
// stack with dev passwords (PostgreSQL), no auth at all (Temporal) and a
// codec server, so every published port is bound to 127.0.0.1, never to
// every interface (Compose's default for "HOST:CONTAINER").
func TestComposePublishesOnLoopbackOnly(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Ports []string `yaml:"ports"`
		} `yaml:"services"`
	}
	readYAML(t, filepath.Join("../..", "docker-compose.yml"), &compose)
	n := 0
	for name, svc := range compose.Services {
		for _, p := range svc.Ports {
			n++
			parts := strings.Split(p, ":")
			if len(parts) != 3 || net.ParseIP(parts[0]) == nil || !net.ParseIP(parts[0]).IsLoopback() {
				t.Errorf("service %s publishes %q: want 127.0.0.1:HOST:CONTAINER", name, p)
			}
		}
	}
	for _, must := range []string{"postgresql", "temporal"} {
		if len(compose.Services[must].Ports) == 0 {
			t.Errorf("service %s publishes no port (the test expects it to)", must)
		}
	}
	if n == 0 {
		t.Fatal("no published ports found in docker-compose.yml")
	}
}
