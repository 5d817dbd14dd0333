package audit

import (
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
)

// activityState is how far an activity got according to the history.
type activityState int

const (
	stateOpen      activityState = iota // scheduled, not closed (yet)
	stateCompleted                      // ActivityTaskCompleted
	stateFailed                         // failed, timed out or cancelled
	// stateRefused: failed with a tool's refusal as its answer
	// (activities.RefusalError, a refused staff decision): its envelope
	// is checked like a completed activity's.
	stateRefused
)

// answered reports whether the history holds the activity's answer: its
// result, or the refusal it failed with.
func (a *activity) answered() bool { return a.State == stateCompleted || a.State == stateRefused }

// activity is one scheduled activity (or recorded local activity).
type activity struct {
	ID      string
	Type    string
	Local   bool
	Attempt int32
	State   activityState
	// EventID is the event holding the result (completed) or the
	// scheduling event otherwise.
	EventID int64
	Result  *commonpb.Payloads
	// envs and envsErr are Result's envelopes, decoded once (envelopes).
	envs    []resultEnvelope
	envsErr error
	decoded bool
}

// envelopes decodes the result's envelopes once: the evidence and the
// business-row checks both read them, and a result is decrypted to read.
func (a *activity) envelopes(dc converter.DataConverter) ([]resultEnvelope, error) {
	if !a.decoded {
		a.envs, a.envsErr = envelopesOf(dc, a.Result)
		a.decoded = true
	}
	return a.envs, a.envsErr
}

// events is what the evidence checks need from a history.
type events struct {
	// Activities in the order they were scheduled.
	Activities []*activity
	// RunIDs are run ids whose snapshots belong to this history: besides
	// the run itself, the base runs of resets, whose completed activities
	// a reset copies into the new run's history.
	RunIDs map[string]bool
}

// byID returns the activities with this id (a local and a regular
// activity can share one, since the SDK numbers them separately).
func (e *events) byID(id string) []*activity {
	var out []*activity
	for _, a := range e.Activities {
		if a.ID == id {
			out = append(out, a)
		}
	}
	return out
}

// localActivityMarker is the SDK's marker for a local activity result.
const localActivityMarker = "LocalActivity"

// scan walks the history once.
func scan(h *historypb.History, dc converter.DataConverter) *events {
	ev := &events{RunIDs: map[string]bool{}}
	bySched := map[int64]*activity{}
	for _, e := range h.GetEvents() {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			attr := e.GetActivityTaskScheduledEventAttributes()
			a := &activity{ID: attr.GetActivityId(), Type: attr.GetActivityType().GetName(), EventID: e.GetEventId()}
			bySched[e.GetEventId()] = a
			ev.Activities = append(ev.Activities, a)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			attr := e.GetActivityTaskStartedEventAttributes()
			if a := bySched[attr.GetScheduledEventId()]; a != nil {
				a.Attempt = attr.GetAttempt()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			attr := e.GetActivityTaskCompletedEventAttributes()
			if a := bySched[attr.GetScheduledEventId()]; a != nil {
				a.State, a.EventID, a.Result = stateCompleted, e.GetEventId(), attr.GetResult()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			attr := e.GetActivityTaskFailedEventAttributes()
			a := bySched[attr.GetScheduledEventId()]
			closeFailed(a)
			if a != nil {
				a.EventID = e.GetEventId()
				// A refusal carries the error and the CallToolResult
				// (activities.RefusalError): the second is the answer.
				if d := attr.GetFailure().GetApplicationFailureInfo().GetDetails().GetPayloads(); len(d) == 2 && attr.GetFailure().GetApplicationFailureInfo().GetNonRetryable() {
					a.State, a.Result = stateRefused, &commonpb.Payloads{Payloads: d[1:]}
				}
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			closeFailed(bySched[e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()])
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			closeFailed(bySched[e.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()])
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if a := localActivity(e, dc); a != nil {
				ev.Activities = append(ev.Activities, a)
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			if base := e.GetWorkflowTaskFailedEventAttributes().GetBaseRunId(); base != "" {
				ev.RunIDs[base] = true
			}
		}
	}
	return ev
}

func closeFailed(a *activity) {
	if a != nil {
		a.State = stateFailed
	}
}

// localActivity reads a local activity marker: its data (id, type,
// attempt) and its result, or nil for any other marker.
func localActivity(e *historypb.HistoryEvent, dc converter.DataConverter) *activity {
	attr := e.GetMarkerRecordedEventAttributes()
	if attr.GetMarkerName() != localActivityMarker {
		return nil
	}
	var md struct {
		ActivityID   string
		ActivityType string
		Attempt      int32
	}
	if err := dc.FromPayloads(attr.GetDetails()["data"], &md); err != nil {
		return nil
	}
	a := &activity{ID: md.ActivityID, Type: md.ActivityType, Local: true, Attempt: md.Attempt, EventID: e.GetEventId(), State: stateFailed}
	if attr.GetFailure() == nil {
		a.State, a.Result = stateCompleted, attr.GetDetails()["result"]
	}
	return a
}
