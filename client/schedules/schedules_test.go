package schedules_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/client/schedules"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

func TestEnsureArchiveScheduleIsIdempotent(t *testing.T) {
	c := clienttest.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	id := "test-archive-" + testenv.TaskQueue(t)
	t.Cleanup(func() { _ = c.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background()) })
	s := schedules.ArchiveSchedule{ID: id, TaskQueue: "test-no-worker", Every: time.Hour,
		Input: maintenance.ArchiveHistoriesInput{TaskQueue: "test-no-worker"}}
	for i := 0; i < 2; i++ {
		if err := schedules.EnsureArchiveSchedule(ctx, c, s); err != nil {
			t.Fatalf("ensure #%d: %v", i+1, err)
		}
	}
	s.Every = 30 * time.Minute
	if err := schedules.EnsureArchiveSchedule(ctx, c, s); err != nil {
		t.Fatal(err)
	}
	desc, err := c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := desc.Schedule.Spec.Intervals; len(got) != 1 || got[0].Every != 30*time.Minute {
		t.Fatalf("intervals after update: %+v", got)
	}
	if act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction); !ok || act.Workflow != maintenance.ArchiveHistoriesWorkflowName ||
		act.TaskQueue != "test-no-worker" {
		t.Fatalf("action: %+v", desc.Schedule.Action)
	}
	if err := schedules.EnsureArchiveSchedule(ctx, c, schedules.ArchiveSchedule{TaskQueue: "q", Every: time.Second}); err == nil {
		t.Fatal("an interval below a minute was accepted")
	}
}

func TestEnsureReconcileScheduleIsIdempotent(t *testing.T) {
	c := clienttest.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	id := "test-reconcile-" + testenv.TaskQueue(t)
	t.Cleanup(func() { _ = c.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background()) })
	s := schedules.ReconcileSchedule{ID: id, TaskQueue: "test-no-worker", Every: time.Hour}
	for i := 0; i < 2; i++ {
		if err := schedules.EnsureReconcileSchedule(ctx, c, s); err != nil {
			t.Fatalf("ensure #%d: %v", i+1, err)
		}
	}
	s.Every = 2 * time.Hour
	if err := schedules.EnsureReconcileSchedule(ctx, c, s); err != nil {
		t.Fatal(err)
	}
	desc, err := c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := desc.Schedule.Spec.Intervals; len(got) != 1 || got[0].Every != 2*time.Hour {
		t.Fatalf("intervals after update: %+v", got)
	}
	if act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction); !ok || act.Workflow != maintenance.ReconcileWorkflowName || act.TaskQueue != "test-no-worker" {
		t.Fatalf("action: %+v", desc.Schedule.Action)
	}
	if err := schedules.EnsureReconcileSchedule(ctx, c, schedules.ReconcileSchedule{TaskQueue: "q", Every: time.Second}); err == nil {
		t.Fatal("an interval below a minute was accepted")
	}
}
