package client_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
)

const newKeyID = "rotated-2"

// ringSpec is the test ring plus rotated-2, which is current.
func ringSpec() string {
	return newKeyID + ":" + base64.StdEncoding.EncodeToString(codectest.Key(newKeyID)) + "," + codectest.Spec()
}

func sdkOptionsWith(t *testing.T, spec, current string, logger *zap.Logger) sdkclient.Options {
	t.Helper()
	ring, err := codec.ParseKeyRing(spec, current)
	if err != nil {
		t.Fatal(err)
	}
	opts := sdkclient.Options{HostPort: testenv.TemporalAddress(), Namespace: "default"}
	if logger != nil {
		opts.Logger = client.TemporalLogger(logger)
	}
	codec.Apply(&opts, codec.New(ring))
	return opts
}

func sdkClientWith(t *testing.T, spec, current string, logger *zap.Logger) sdkclient.Client {
	t.Helper()
	c, err := sdkclient.Dial(sdkOptionsWith(t, spec, current, logger))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestMissingPayloadKeyIsNamed: a worker whose key ring lacks the key a
// draft order's payloads are under cannot run it. Nothing is lost and the
// workflow does not fail; the worker's log names the key id and the
// workflow; Status and Confirm answer UPSTREAM_ERROR with details.key_id
// (Confirm without waiting for its deadline); once the key is back the
// order goes on. A client that lacks the key its answer is under is told
// that key too.
func TestMissingPayloadKeyIsNamed(t *testing.T) {
	testenv.Integration(t)
	full := sdkClientWith(t, ringSpec(), newKeyID, nil)
	s := wiringtest.StartWith(t, wiringtest.Options{Temporal: full})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	c, err := client.New(ctx, client.Options{Temporal: sdkOptionsWith(t, ringSpec(), newKeyID, nil), TaskQueue: s.TaskQueue})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := c.StartDraftOrder(ctx, order(key("km"), tshirt))
	if err != nil || h.Status.Confirmation == nil {
		t.Fatalf("start: %+v, %v", h.Status, err)
	}

	// The worker restarts without rotated-2.
	s.Worker.Stop()
	core, logs := observer.New(zap.InfoLevel)
	lacking := sdkClientWith(t, codectest.Spec(), codectest.KeyID, zap.New(core))
	w := s.WorkerOn(t, wiringtest.Options{Temporal: lacking}, s.TaskQueue)

	_, err = c.Status(ctx, h.WorkflowID)
	wantMissingKey(t, "status", err, toolkit.UpstreamError)
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	began := time.Now()
	err = c.Confirm(cctx, h.WorkflowID, h.Status.Confirmation.QuoteHash)
	ccancel()
	wantMissingKey(t, "confirm", err, toolkit.UpstreamError)
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("confirm took %s: it waited for its deadline instead of naming the key", took)
	}
	named := logs.FilterMessageSnippet("payload key missing").FilterField(zap.String("key_id", newKeyID)).
		FilterField(zap.String("workflow_id", h.WorkflowID))
	if named.Len() == 0 || named.All()[0].Level != zap.ErrorLevel {
		t.Fatalf("no worker error line names key %s and workflow %s; lines: %v", newKeyID, h.WorkflowID, logs.All())
	}
	if d, err := c.Temporal().DescribeWorkflowExecution(ctx, h.WorkflowID, ""); err != nil ||
		d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("the draft order must wait for the key, not end: %v %v", d.GetWorkflowExecutionInfo().GetStatus(), err)
	}

	// The key is back: the order goes on where it stopped.
	w.Stop()
	s.WorkerOn(t, wiringtest.Options{Temporal: sdkClientWith(t, ringSpec(), newKeyID, zaptest.NewLogger(t))}, s.TaskQueue)
	// The server retries the failed workflow task on its own schedule;
	// until then the answer is the retryable UPSTREAM_ERROR above.
	deadline := time.Now().Add(time.Minute)
	for {
		err := c.Confirm(ctx, h.WorkflowID, h.Status.Confirmation.QuoteHash)
		if err == nil {
			break
		}
		if te, ok := err.(*toolkit.Error); !ok || !te.Code.Retryable() || time.Now().After(deadline) {
			t.Fatalf("confirm with the key back: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("confirmed %s after the key came back", h.WorkflowID)
	if res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(time.Minute)); err != nil || res.DraftOrder == nil {
		t.Fatalf("result with the key back: %+v, %v", res, err)
	}

	// A client without rotated-2 cannot read the answer, and is told so.
	old, err := client.New(ctx, client.Options{Temporal: sdkOptionsWith(t, codectest.Spec(), codectest.KeyID, nil), TaskQueue: s.TaskQueue})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	_, err = old.Status(ctx, h.WorkflowID)
	wantMissingKey(t, "status read by a client without the key", err, toolkit.InvalidArgument)
}

func wantMissingKey(t *testing.T, what string, err error, code toolkit.Code) {
	t.Helper()
	te := wantCode(t, what, err, code)
	if te.Details["key_id"] != newKeyID || !errors.Is(err, client.ErrPayloadKeyMissing) || !strings.Contains(te.Message, `"`+newKeyID+`"`) {
		t.Fatalf("%s: %v (details %v): want the missing key %s named", what, err, te.Details, newKeyID)
	}
	t.Logf("%s: %v", what, err)
}
