package client

import (
	"context"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// signalDraft sends a signal to a draft order and, unless acknowledgement
// is disabled, watches the status query until taken says the workflow
// acted on it (or returns the error the outcome amounts to), or the workflow records a rejection of this signal (an
// error with the workflow's reason), or Options.AckTimeout passes (the
// signal is durable in history, so that is not an error).
//
// Signals are fire-and-forget in Temporal: without this a stale quote
// hash or an unknown approver would look like success to the caller.
func (c *Client) signalDraft(ctx context.Context, id, name string, payload any, h signalHooks) error {
	before := -1
	if c.ack > 0 {
		st, err := c.Status(ctx, id)
		if err != nil {
			return err
		}
		if st.Result != nil {
			if h.ended != nil {
				return h.ended(*st.Result)
			}
			return endedError(id, *st.Result)
		}
		before = st.Rejected.Total
	}
	if err := c.tc.SignalWorkflow(ctx, id, "", name, payload); err != nil {
		return c.closedOrMissing(ctx, err, id, "signal "+name+" to")
	}
	if before < 0 {
		return nil
	}
	deadline := time.Now().Add(c.ack)
	for {
		// The query alone: a run that closes is caught by watchClose.
		st, err := c.queryStatus(ctx, id)
		if err != nil {
			return err
		}
		if r := newRejection(st.Rejected, before, name); r != nil {
			return rejectionError(id, *r)
		}
		if ok, err := h.taken(st); ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return c.wrap(ctx.Err(), id, "signal "+name+" to")
		case <-time.After(c.poll):
		}
	}
}

// signalHooks tell signalDraft how to read the workflow's answer.
type signalHooks struct {
	// taken reports whether the status shows the signal was acted on, or
	// the error its outcome amounts to.
	taken func(workflows.DraftOrderStatus) (bool, error)
	// ended answers a signal to a run that already ended; nil means
	// CONFLICT. A repeat of what ended it (the same confirmation, a
	// second cancel) is not an error: callers retry.
	ended func(workflows.DraftOrderResult) error
}

// endedError is the CONFLICT of a signal to a run that already ended.
func endedError(id string, r workflows.DraftOrderResult) error {
	return errf(toolkit.Conflict, "%s already ended (%s): %s", id, r.State, r.Message).WithDetail("state", r.State)
}

// newRejection finds a rejection of signal name recorded after the first
// before ones.
func newRejection(log workflows.SignalLog, before int, name string) *workflows.RejectedSignal {
	added := log.Total - before
	if added <= 0 {
		return nil
	}
	if added > len(log.Rejected) {
		added = len(log.Rejected)
	}
	for i := len(log.Rejected) - added; i < len(log.Rejected); i++ {
		if log.Rejected[i].Signal == name {
			r := log.Rejected[i]
			return &r
		}
	}
	return nil
}

// rejectionCodes maps the workflow's stable rejection reasons into the
// closed set.
var rejectionCodes = map[string]toolkit.Code{
	workflows.RejectMalformed:         toolkit.InvalidArgument,
	workflows.RejectNotWaiting:        toolkit.Conflict,
	workflows.RejectStaleQuoteHash:    toolkit.Conflict,
	workflows.RejectStaleApproval:     toolkit.Conflict,
	workflows.RejectDuplicateApproval: toolkit.Conflict,
	workflows.RejectUnknownApprover:   toolkit.Forbidden,
	workflows.RejectApproverForbidden: toolkit.Forbidden,
	workflows.RejectVerifyFailed:      toolkit.UpstreamError,
}

// rejectionError is the refusal as an error; details carry the reason.
func rejectionError(id string, r workflows.RejectedSignal) *toolkit.Error {
	code, ok := rejectionCodes[r.Reason]
	if !ok {
		code = toolkit.Conflict
	}
	return errf(code, "%s refused the %s signal (%s): %s", id, r.Signal, r.Reason, r.Detail).
		WithDetail("reason", r.Reason).WithDetail("signal", r.Signal)
}

// pollStatus polls until done(status) or the deadline (TIMEOUT carrying
// the last state). A run that closes meanwhile ends the wait: a failed run
// with its error (the query would keep answering its last state).
func (c *Client) pollStatus(ctx context.Context, id string, deadline time.Time, waitingFor string,
	done func(workflows.DraftOrderStatus) bool) (workflows.DraftOrderStatus, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	closed := c.watchClose(wctx, id)
	for {
		st, err := c.Status(ctx, id)
		if err != nil {
			return st, err
		}
		if done(st) {
			return st, nil
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return st, errf(toolkit.Timeout, "%s is still in state %s: no %s by the deadline", id, st.State, waitingFor).
				WithDetail("state", st.State)
		}
		select {
		case <-ctx.Done():
			return st, c.wrap(ctx.Err(), id, "wait for")
		case err := <-closed:
			if err != nil {
				return st, c.wrap(err, id, "run of")
			}
			// Completed: the query now has the result.
			closed = nil
		case <-time.After(c.poll):
		}
	}
}

// watchClose long-polls the run's result; the channel yields nil when it
// completed, its error when it failed, and nothing while ctx lives.
func (c *Client) watchClose(ctx context.Context, id string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		err := c.tc.GetWorkflow(ctx, id, "").Get(ctx, nil)
		if ctx.Err() == nil {
			ch <- err
		}
	}()
	return ch
}
