package clustertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.yaml.in/yaml/v3"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/config"
)

// TestChartValuesReachTheCluster renders the Helm chart with the values for
// a self-hosted mTLS Temporal (deploy/helm/cartwright/values-selfhosted-mtls.yaml),
// takes the worker container's TEMPORAL_* environment from the rendering,
// puts the cluster's files where the chart mounts its Secret
// (/etc/temporal-tls/{tls.crt,tls.key,ca.crt}) and its address where the
// in-cluster Service name is, and connects with exactly that environment:
// the chart's TLS settings (client certificate, private CA, server name)
// are what an mTLS cluster needs. Without the CA, or with another server
// name, the same dial fails.
func TestChartValuesReachTheCluster(t *testing.T) {
	c := load(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	helm := filepath.Join(root, ".bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		t.Skipf("no %s (make tools)", helm)
	}
	out, err := exec.Command(helm, "template", "cartwright", filepath.Join(root, "deploy/helm/cartwright"),
		"--kube-version", "1.33.4", "-f", filepath.Join(root, "deploy/helm/cartwright/values-selfhosted-mtls.yaml")).Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	env := workerTemporalEnv(t, out)
	for _, k := range []string{"TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_SERVER_NAME"} {
		if env[k] == "" {
			t.Fatalf("the rendered worker has no %s: %v", k, env)
		}
	}
	mounted := map[string]string{"/etc/temporal-tls/tls.crt": "client.crt", "/etc/temporal-tls/tls.key": "client.key", "/etc/temporal-tls/ca.crt": "ca.crt",
		// make cluster's provider has a certificate of the cluster's CA,
		// which the example values mount as temporal.oidc.caSecret.
		"/etc/cartwright-oidc-ca/ca.crt": "ca.crt"}
	for k, v := range env {
		if f, ok := mounted[v]; ok {
			env[k] = filepath.Join(c.tlsDir, f)
		}
	}
	env["TEMPORAL_ADDRESS"], env["TEMPORAL_NAMESPACE"] = c.address, "default"
	// The worker's own client at the provider (docs/operators.md#sign-in-on-the-cluster):
	// its id, and its secret alone where the chart mounts it.
	if iss := c.env["CARTWRIGHT_OIDC_ISSUER"]; iss != "" {
		if env["CARTWRIGHT_OIDC_CLIENT_ID"] != "cartwright-worker" || env["CARTWRIGHT_OIDC_CLIENT_SECRET_FILE"] == "" ||
			env["CARTWRIGHT_OIDC_CA_FILE"] != filepath.Join(c.tlsDir, "ca.crt") {
			t.Fatalf("the rendered worker does not name its own provider client and the provider's CA: %v", env)
		}
		env["CARTWRIGHT_OIDC_TOKEN_URL"] = iss + "/oauth2/token"
		env["CARTWRIGHT_OIDC_CLIENT_SECRET_FILE"] = filepath.Join(c.dir, "idp", "cartwright-worker.secret")
	}

	dial := func(env map[string]string) error {
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TEMPORAL_") || strings.HasPrefix(k, "CARTWRIGHT_OIDC_") {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
		}
		for k, v := range env {
			t.Setenv(k, v)
		}
		opts, err := envconfig.LoadDefaultClientOptions()
		if err != nil {
			return err
		}
		opts.Logger = quiet{}
		cfg, err := config.Load()
		if err != nil {
			return err
		}
		if opts.Credentials, err = client.Credentials(cfg.OIDC); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tc, err := sdkclient.DialContext(ctx, opts)
		if err != nil {
			return err
		}
		defer tc.Close()
		if _, err = tc.CheckHealth(ctx, &sdkclient.CheckHealthRequest{}); err != nil {
			return err
		}
		// A call the authorizer decides (every identity may describe
		// the namespace).
		_, err = tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
		return err
	}
	if err := dial(env); err != nil {
		t.Fatalf("the chart's environment %v: %v", env, err)
	}
	// The CA is needed, and the server name is checked.
	for _, change := range []struct{ name, value string }{
		{"TEMPORAL_TLS_SERVER_CA_CERT_PATH", ""},
		{"TEMPORAL_TLS_SERVER_NAME", "temporal-frontend.elsewhere"},
	} {
		changed := map[string]string{}
		for k, v := range env {
			changed[k] = v
		}
		if change.value == "" {
			delete(changed, change.name)
		} else {
			changed[change.name] = change.value
		}
		if err := dial(changed); err == nil {
			t.Errorf("with %s=%q the dial still succeeded", change.name, change.value)
		}
	}
	t.Logf("the chart's worker environment reaches the cluster: %v", env)
}

// workerTemporalEnv is the TEMPORAL_* variables with a literal value of the
// first container of the rendered Deployment named cartwright-worker*.
func workerTemporalEnv(t *testing.T, rendered []byte) map[string]string {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(rendered))
	for {
		var doc struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Env []struct{ Name, Value string }
						}
					}
				}
			}
		}
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("no cartwright-worker Deployment in the rendering: %v", err)
		}
		if doc.Kind != "Deployment" || !strings.HasPrefix(doc.Metadata.Name, "cartwright-worker") || len(doc.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		env := map[string]string{}
		for _, e := range doc.Spec.Template.Spec.Containers[0].Env {
			if (strings.HasPrefix(e.Name, "TEMPORAL_") || strings.HasPrefix(e.Name, "CARTWRIGHT_OIDC_")) && e.Value != "" {
				env[e.Name] = e.Value
			}
		}
		return env
	}
}
