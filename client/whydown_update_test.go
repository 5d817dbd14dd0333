package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// TestUpdateDeadlineSaysWhatKeptTheAnswer: a draft order started on a
// task queue no worker polls gets no answer to its start's update; at the
// caller's deadline the TIMEOUT says why (docs/backend.md#outages) — here
// that no worker polls the queue — instead of only "no answer before the
// deadline". On a cluster the same check names history or matching when
// they are down (make test-cluster reads it).
func TestUpdateDeadlineSaysWhatKeptTheAnswer(t *testing.T) {
	testenv.Integration(t)
	queue := testenv.TaskQueue(t) // polled by no one
	setup, cancelSetup := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancelSetup()
	c, err := client.New(setup, client.Options{Temporal: sdkOptionsWith(t, codectest.Spec(), "", nil), TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = c.StartDraftOrder(ctx, order(key("nopoll"), tshirt))
	if err == nil {
		t.Fatal("a draft order on a queue nobody polls got an answer")
	}
	if msg := err.Error(); !strings.Contains(msg, `no worker polls task queue "`+queue+`"`) {
		t.Fatalf("the start's TIMEOUT says %q, want it to name the queue nobody polls", msg)
	}
}
