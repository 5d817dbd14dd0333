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

func TestEnsureFXRatesScheduleIsIdempotent(t *testing.T) {
	c := clienttest.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	id := "test-fx-" + testenv.TaskQueue(t)
	t.Cleanup(func() { _ = c.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background()) })
	s := schedules.FXRatesSchedule{ID: id, TaskQueue: "test-no-worker", Every: time.Hour}
	for i := 0; i < 2; i++ {
		if err := schedules.EnsureFXRatesSchedule(ctx, c, s); err != nil {
			t.Fatalf("ensure #%d: %v", i+1, err)
		}
	}
	s.Every = 30 * time.Minute
	if err := schedules.EnsureFXRatesSchedule(ctx, c, s); err != nil {
		t.Fatal(err)
	}
	desc, err := c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := desc.Schedule.Spec.Intervals; len(got) != 1 || got[0].Every != 30*time.Minute {
		t.Fatalf("intervals after update: %+v", got)
	}
	if act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction); !ok || act.Workflow != maintenance.FetchFXRatesWorkflowName ||
		act.TaskQueue != "test-no-worker" {
		t.Fatalf("action: %+v", desc.Schedule.Action)
	}
	if err := schedules.EnsureFXRatesSchedule(ctx, c, schedules.FXRatesSchedule{TaskQueue: "q", Every: time.Second}); err == nil {
		t.Fatal("an interval below a minute was accepted")
	}
}
