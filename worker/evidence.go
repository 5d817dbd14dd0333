package main

import (
	"context"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/workflows"
)

// registerEvidence registers the activities of the Reconcile workflow.
// The evidence store itself is wired into the invoker by connect.
func registerEvidence(w worker.Worker, d *Deps) error {
	w.RegisterActivity(&activities.Reconcile{
		Pool: d.Pool, Temporal: d.Temporal, Logger: d.Logger.Named("reconcile"),
		PendingAfter: d.Config.ReconcilePendingAfter,
	})
	return nil
}

// ensureReconcileSchedule creates the cartwright-reconcile schedule (or
// updates it to this configuration when another worker created it first):
// every CARTWRIGHT_RECONCILE_EVERY on this worker's task queue, checking
// the workflows of that queue.
func ensureReconcileSchedule(ctx context.Context, c client.Client, cfg config.Config) error {
	return workflows.EnsureReconcileSchedule(ctx, c, workflows.ReconcileSchedule{
		TaskQueue: cfg.TaskQueue,
		Every:     cfg.ReconcileEvery,
		Input:     workflows.ReconcileInput{TaskQueue: cfg.TaskQueue},
	})
}
