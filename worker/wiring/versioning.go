package wiring

import (
	"fmt"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// DeploymentOptions are the Worker Versioning options of a worker built
// from cfg: none without CARTWRIGHT_DEPLOYMENT_NAME; else the worker is
// version {deployment, build id} of a Worker Deployment, and every workflow
// it serves is pinned.
//
// Why pinned, for every cartwright workflow: a draft order waits for its
// user up to the confirm window and for support staff up to a day; an
// onboarding waits for its merchant for weeks. Pinned, each run finishes
// on the code it started with, whatever a later deploy changes, so a change
// needs no workflow.GetVersion patch to be safe for running histories; the
// price is that a build must keep a few workers until its last pinned run
// closes (deploy/SCALING.md#rolling-out-a-build). This is cartwright's one
// versioning mechanism (docs/versioning.md): a change that breaks
// determinism ships as a new build id. Auto-upgrade would move waiting runs
// onto new code at their next task and make every change a patch.
func DeploymentOptions(cfg config.Config) (worker.DeploymentOptions, error) {
	if cfg.DeploymentName == "" {
		if cfg.BuildID != "" {
			return worker.DeploymentOptions{}, fmt.Errorf("CARTWRIGHT_BUILD_ID is set without CARTWRIGHT_DEPLOYMENT_NAME: set both to version the worker")
		}
		return worker.DeploymentOptions{}, nil
	}
	build := cfg.BuildID
	if build == "" {
		build = toolkit.BuildHash()
	}
	if build == "" || build == "dev" || build == "unknown" {
		return worker.DeploymentOptions{}, fmt.Errorf("CARTWRIGHT_DEPLOYMENT_NAME=%s needs a build id: set CARTWRIGHT_BUILD_ID or link the build hash (make build)", cfg.DeploymentName)
	}
	return worker.DeploymentOptions{
		UseVersioning:             true,
		Version:                   worker.WorkerDeploymentVersion{DeploymentName: cfg.DeploymentName, BuildID: build},
		DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
	}, nil
}
