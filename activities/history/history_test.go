package history

import (
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
)

func TestHistoryRoundTripAndSummary(t *testing.T) {
	// A draft order to its end: written, held in its run, cancelled.
	b, err := os.ReadFile("../../audit/testdata/histories/settle_cancel.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := DecodeHistory(b)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHistory(enc)
	if err != nil || !proto.Equal(h, back) {
		t.Fatalf("round trip changed the history (%v)", err)
	}
	sum, err := Summarize(h)
	if err != nil {
		t.Fatal(err)
	}
	if sum.WorkflowType != "DraftOrder" || !strings.HasPrefix(sum.WorkflowID, "draft-order/") || sum.RunID == "" ||
		sum.Status != "Completed" || !sum.Closed() || sum.ClosedAt.Before(sum.StartedAt) || sum.Events != len(h.GetEvents()) {
		t.Fatalf("summary %+v", sum)
	}
	rec, err := NewRecord(sum.WorkflowID, sum.RunID, h)
	if err != nil || rec.HistorySHA256 == "" || rec.CloseStatus != "Completed" {
		t.Fatalf("record %+v %v", rec, err)
	}
	// An open run is not archived.
	h.Events = h.Events[:len(h.Events)-1]
	if _, err := NewRecord(sum.WorkflowID, sum.RunID, h); err == nil {
		t.Fatal("an open run was accepted for the archive")
	}
	if _, err := DecodeHistory([]byte(`{"events": []}`)); err == nil {
		t.Fatal("an empty history decoded")
	}
}

func TestClosedQuery(t *testing.T) {
	until := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	q, err := closedQuery(SweepOptions{TaskQueue: "cartwright", ExcludeTypes: []string{"ArchiveHistories"}}, until.Add(-time.Hour), until)
	want := `ExecutionStatus != "Running" AND CloseTime >= "2026-03-02T09:00:00Z" AND CloseTime < "2026-03-02T10:00:00Z" AND TaskQueue = "cartwright" AND WorkflowType != "ArchiveHistories"`
	if err != nil || q != want {
		t.Fatalf("query\n got %s (%v)\nwant %s", q, err, want)
	}
	if q, _ := closedQuery(SweepOptions{}, time.Time{}, until); strings.Contains(q, ">=") || strings.Contains(q, "TaskQueue") {
		t.Fatalf("first pass of the whole namespace: %s", q)
	}
	if _, err := closedQuery(SweepOptions{TaskQueue: `q" OR "1"="1`}, time.Time{}, until); err == nil {
		t.Fatal("a quote in a task queue name reached the query")
	}
}
