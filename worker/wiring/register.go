package wiring

import (
	"context"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/client/schedules"
	"github.com/cartwright-dev/cartwright/commerce/fxrates"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
	"github.com/cartwright-dev/cartwright/workflows/registry"
)

// archiveEvery is the archive schedule's interval: far below any namespace
// retention (a day at least), so every closed history is copied long before
// the server deletes it.
const archiveEvery = 15 * time.Minute

// RegisterRoles puts what roles say this process serves on r, the
// workflows, the activities, or both: the one registration list. Workflows
// take their activity options from the specs in d.Registry, so it runs
// after BuildFor. A workflow worker runs the draft
// order's read-only tools as local activities (Tools.CallTool in its own
// process), so it registers the tool activity even without the activities
// role; WorkerOptions keeps it from polling activity tasks.
func (d *Deps) RegisterRoles(r worker.Registry, roles Roles) {
	if roles.Workflows {
		registry.Register(r, d.Registry.Specs())
	}
	if roles.Workflows && !roles.Activities {
		r.RegisterActivity(d.localActivities())
	}
	if roles.Activities {
		for _, a := range d.activities() {
			r.RegisterActivity(a)
		}
	}
}

// localActivities is the activity struct workflows run as local
// activities: the tool activity, on the same invoker and evidence store.
func (d *Deps) localActivities() *activities.Tools {
	return &activities.Tools{Invoker: d.Invoker, FX: d.fxSource(), Clock: d.Clock}
}

// activities are the activity structs of every workflow, each holding the
// clients it needs.
func (d *Deps) activities() []any {
	return []any{
		d.localActivities(),
		&activities.Archive{Temporal: d.Temporal, Store: d.Archive},
		&activities.FXRates{Fetcher: fxrates.Fetcher{URL: d.Config.FXFeedURL}, Store: fxrates.PGStore{Pool: d.Pool},
			Logger: d.Logger.Named("fxrates")},
		&activities.Reconcile{
			Pool: d.Pool, Temporal: d.Temporal, Logger: d.Logger.Named("reconcile"),
			PendingAfter: d.Config.ReconcilePendingAfter, RowKeys: d.Evidence.RowKeys(), CheckDraftTotal: d.draftTotals,
		},
	}
}

// EnsureSchedules creates (or updates to this configuration) the reconcile
// and archive schedules on the configured task queue, and the
// exchange-rate schedule when a feed is configured. The archive skips the
// reconcile and exchange-rate passes and the clients' asks of the rates
// in use: they carry no tool evidence worth auditing.
func (d *Deps) EnsureSchedules(ctx context.Context) error {
	cfg := d.Config
	if cfg.FXFeedURL != "" {
		if err := schedules.EnsureFXRatesSchedule(ctx, d.Temporal, schedules.FXRatesSchedule{
			TaskQueue: cfg.TaskQueue, Every: cfg.FXFetchEvery,
		}); err != nil {
			return err
		}
	}
	if err := schedules.EnsureReconcileSchedule(ctx, d.Temporal, schedules.ReconcileSchedule{
		TaskQueue: cfg.TaskQueue,
		Every:     cfg.ReconcileEvery,
		Input:     maintenance.ReconcileInput{TaskQueue: cfg.TaskQueue},
	}); err != nil {
		return err
	}
	return schedules.EnsureArchiveSchedule(ctx, d.Temporal, schedules.ArchiveSchedule{
		TaskQueue: cfg.TaskQueue,
		Every:     archiveEvery,
		Input: maintenance.ArchiveHistoriesInput{
			TaskQueue: cfg.TaskQueue, ExcludeTypes: []string{maintenance.ReconcileWorkflowName, maintenance.FetchFXRatesWorkflowName,
				maintenance.RatesInUseWorkflowName},
		},
	})
}
