package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/evidence/archive"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// FetchHistory reads every event of one run from the server (runID "" means
// the current run). A run the server does not know — never existed, or
// deleted after retention — gives an error for which IsNotFound is true.
func FetchHistory(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		h.Events = append(h.Events, ev)
	}
	if len(h.Events) == 0 {
		// Some servers answer an unknown run with an empty page, not NotFound.
		return nil, fmt.Errorf("history of %s: %w", workflowID, serviceerror.NewNotFound("workflow execution has no history"))
	}
	return h, nil
}

// IsNotFound reports whether err says the server has no such workflow run.
func IsNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// EncodeHistory is the proto JSON of h in the Temporal API's own dialect,
// the same shape `temporal workflow show --output json` writes.
func EncodeHistory(h *historypb.History) ([]byte, error) {
	b, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode history: %w", err)
	}
	return b, nil
}

// DecodeHistory reads a history written by EncodeHistory or exported by the
// temporal CLI.
func DecodeHistory(b []byte) (*historypb.History, error) {
	h, err := client.HistoryFromJSON(bytes.NewReader(b), client.HistoryJSONOptions{})
	if err != nil {
		return nil, fmt.Errorf("decode history: %w", err)
	}
	if len(h.GetEvents()) == 0 {
		return nil, errors.New("decode history: no events")
	}
	return h, nil
}

// Summary is what a history says about its own run.
type Summary struct {
	// WorkflowID is empty in histories of servers older than 1.21.
	WorkflowID   string
	RunID        string
	WorkflowType string
	TaskQueue    string
	// Status is the visibility name of the close event (Completed, Failed,
	// Canceled, Terminated, TimedOut, ContinuedAsNew), or Running.
	Status    string
	StartedAt time.Time
	// ClosedAt is zero while the run is open.
	ClosedAt time.Time
	Events   int
}

// Closed reports whether the history ends with a close event.
func (s Summary) Closed() bool { return s.Status != StatusRunning }

// StatusRunning is the Status of a history without a close event.
const StatusRunning = "Running"

var closeStatus = map[enumspb.EventType]string{
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:        "Completed",
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:           "Failed",
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:         "Canceled",
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:       "Terminated",
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:        "TimedOut",
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: "ContinuedAsNew",
}

// Summarize reads the run's identity and state from its first and last event.
func Summarize(h *historypb.History) (Summary, error) {
	evs := h.GetEvents()
	if len(evs) == 0 {
		return Summary{}, errors.New("history has no events")
	}
	start := evs[0].GetWorkflowExecutionStartedEventAttributes()
	if evs[0].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED || start == nil {
		return Summary{}, errors.New("history does not begin with WorkflowExecutionStarted")
	}
	s := Summary{
		WorkflowID: start.GetWorkflowId(), RunID: start.GetOriginalExecutionRunId(),
		WorkflowType: start.GetWorkflowType().GetName(), TaskQueue: start.GetTaskQueue().GetName(),
		Status: StatusRunning, StartedAt: evs[0].GetEventTime().AsTime().UTC(), Events: len(evs),
	}
	last := evs[len(evs)-1]
	if st, ok := closeStatus[last.GetEventType()]; ok {
		s.Status, s.ClosedAt = st, last.GetEventTime().AsTime().UTC()
	}
	return s, nil
}

// NewRecord encodes a closed run's history for archive.Store.Put.
// workflowID and runID are the run's identity as the server lists it (the
// history alone does not carry the run id after a reset).
func NewRecord(workflowID, runID string, h *historypb.History) (archive.Record, error) {
	sum, err := Summarize(h)
	if err != nil {
		return archive.Record{}, err
	}
	if !sum.Closed() {
		return archive.Record{}, fmt.Errorf("archive: run %s of %s is still open", runID, workflowID)
	}
	b, err := EncodeHistory(h)
	if err != nil {
		return archive.Record{}, err
	}
	return archive.Record{
		WorkflowID: workflowID, RunID: runID, WorkflowType: sum.WorkflowType, TaskQueue: sum.TaskQueue,
		CloseStatus: sum.Status, StartedAt: sum.StartedAt, ClosedAt: sum.ClosedAt, Events: sum.Events,
		HistoryJSON: b, HistorySHA256: toolkit.HashBytes(b),
	}, nil
}

// RecordHistory decodes an archived run's history.
func RecordHistory(r *archive.Record) (*historypb.History, error) {
	return DecodeHistory(r.HistoryJSON)
}
