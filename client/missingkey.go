package client

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// ErrPayloadKeyMissing marks an error caused by a payload key id some
// process lacks (errors.Is): a worker that cannot run the workflow, or this
// client that cannot read its answer. details.key_id names the key
// (docs/privacy.md#a-missing-payload-key).
var ErrPayloadKeyMissing = errors.New("payload key missing")

// workerLacksKey is the error of a call the workflow could not answer
// because its worker cannot decrypt the workflow's payloads: UPSTREAM_ERROR
// (it resumes once the key is back), naming the key.
func workerLacksKey(what, id, keyID string, cause error) *toolkit.Error {
	return errf(toolkit.UpstreamError,
		"%s %s: the worker cannot decrypt this workflow's payloads: payload key %q is not in its key ring (CARTWRIGHT_PAYLOAD_KEYS); the workflow waits and nothing is lost: add the key to the workers' ring and restart them",
		what, id, keyID).WithDetail("key_id", keyID).WithDetail("upstream_code", "payload_key_missing").
		WithCause(errors.Join(ErrPayloadKeyMissing, cause))
}

// clientLacksKey is the error of an answer this client cannot decrypt.
func clientLacksKey(what, id, keyID string, cause error) *toolkit.Error {
	return errf(toolkit.InvalidArgument,
		"%s %s: this client cannot decrypt the answer: payload key %q is not in its key ring (CARTWRIGHT_PAYLOAD_KEYS)",
		what, id, keyID).WithDetail("key_id", keyID).WithCause(errors.Join(ErrPayloadKeyMissing, cause))
}

// decodeError maps a failure to decode an answer: the missing key when that
// is why, else UPSTREAM_ERROR.
func decodeError(err error, what, id string) error {
	if keyID, ok := codec.MissingKeyID(err); ok {
		return clientLacksKey(what, id, keyID, err)
	}
	return errf(toolkit.UpstreamError, "%s %s: %v", what, id, err)
}

// historyTimeout bounds the history read that explains a failed call.
const historyTimeout = 5 * time.Second

// stuckOnMissingKey reports the key id a workflow's worker lacks: the
// failure of its latest workflow task, if that task failed (no task
// completed since) on a missing payload key. A failed update or a
// timed-out one says nothing more specific; the history does.
func (c *Client) stuckOnMissingKey(ctx context.Context, id string) (string, bool) {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), historyTimeout)
	defer cancel()
	var last *failurepb.Failure
	it := c.tc.GetWorkflowHistory(hctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return "", false
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			last = nil
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			last = e.GetWorkflowTaskFailedEventAttributes().GetFailure()
		}
	}
	if last == nil {
		return "", false
	}
	return codec.MissingKeyIn(codec.FailureConverter(c.dc).FailureToError(last).Error())
}

// stillStuck is stuckOnMissingKey for a workflow failing now: the failure
// in the history may be one a worker that has the key again is about to
// put right, so it also waits (until ctx ends) for one more attempt of the
// pending workflow task to fail — an attempt that succeeds answers the
// call instead.
func (c *Client) stillStuck(ctx context.Context, id string) (string, bool) {
	if _, ok := c.stuckOnMissingKey(ctx, id); !ok {
		return "", false
	}
	first := int32(-1)
	tick := time.NewTicker(stuckPollEvery)
	defer tick.Stop()
	for {
		d, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return "", false
		}
		attempt := d.GetPendingWorkflowTask().GetAttempt()
		switch {
		case attempt == 0:
			return "", false // no task pending: the workflow moved on
		case first < 0:
			first = attempt
		case attempt > first:
			return c.stuckOnMissingKey(ctx, id)
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-tick.C:
		}
	}
}

// stuckPollEvery paces stillStuck's look at the pending workflow task.
const stuckPollEvery = 500 * time.Millisecond
