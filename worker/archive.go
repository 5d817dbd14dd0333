package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/audit/archive"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/workflows"
)

// archiveEvery is the archive schedule's interval: far below any namespace
// retention (a day at least), so every closed history is copied long before
// the server deletes it.
const archiveEvery = 15 * time.Minute

// registerArchive registers the activity of the ArchiveHistories workflow.
// Archived histories hold PII, so they are sealed with the evidence key.
func registerArchive(w worker.Worker, d *Deps) error {
	sealer, err := evidence.NewAESGCMFromBase64(d.Config.EvidenceKeyID, d.Config.EvidenceKey)
	if err != nil {
		return err
	}
	store, err := archive.NewStore(d.Pool, sealer)
	if err != nil {
		return err
	}
	w.RegisterActivity(&activities.Archive{Temporal: d.Temporal, Store: store})
	return nil
}

// ensureArchiveSchedule creates (or updates) the cartwright-archive-histories
// schedule: every archiveEvery on this worker's task queue, archiving that
// queue's closed workflows except the system ones (reconcile passes carry
// no tool evidence worth auditing).
func ensureArchiveSchedule(ctx context.Context, c client.Client, cfg config.Config) error {
	return workflows.EnsureArchiveSchedule(ctx, c, workflows.ArchiveSchedule{
		TaskQueue: cfg.TaskQueue,
		Every:     archiveEvery,
		Input: workflows.ArchiveHistoriesInput{
			TaskQueue: cfg.TaskQueue, ExcludeTypes: []string{workflows.ReconcileWorkflowName},
		},
	})
}
