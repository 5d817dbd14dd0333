package wiring

import (
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/internal/config"
)

func TestDeploymentOptions(t *testing.T) {
	cfg, err := config.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	if o, err := DeploymentOptions(cfg); err != nil || o.UseVersioning {
		t.Fatalf("unversioned by default: %+v %v", o, err)
	}
	cfg.BuildID = "b1"
	if _, err := DeploymentOptions(cfg); err == nil {
		t.Fatal("a build id without a deployment name must be refused")
	}
	cfg.DeploymentName = "cartwright"
	o, err := DeploymentOptions(cfg)
	if err != nil || !o.UseVersioning || o.Version.DeploymentName != "cartwright" || o.Version.BuildID != "b1" ||
		o.DefaultVersioningBehavior != workflow.VersioningBehaviorPinned {
		t.Fatalf("versioned: %+v %v", o, err)
	}
	// A test binary has no linked build hash: "dev" is no build id.
	cfg.BuildID = ""
	if o, err := DeploymentOptions(cfg); err == nil {
		t.Fatalf("no build id: %+v", o)
	}
}
