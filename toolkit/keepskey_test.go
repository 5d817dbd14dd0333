package toolkit

import "testing"

// TestWhatAKeyKeeps (docs/envelope.md#idempotency): an answer and every
// business refusal are kept under the key; a failure worth retrying and a
// refused input are not, so the next call with the key runs afresh. The
// tool-call workflow, the gateway's direct reads and the direct-call audit
// all ask Response.KeepsKey.
func TestWhatAKeyKeeps(t *testing.T) {
	for _, c := range Codes() {
		want := !c.Retryable() && c != InvalidArgument
		if got := (Response{Error: Errorf(c, "x")}).KeepsKey(); got != want {
			t.Errorf("a refusal with %s: kept %v, want %v", c, got, want)
		}
	}
	if !(Response{OK: true}).KeepsKey() {
		t.Error("an answer is not kept")
	}
	if (Response{OK: false, Error: Errorf(OutOfStock, "x")}).KeepsKey() != true ||
		(Response{OK: false, Error: Errorf(UpstreamError, "x")}).KeepsKey() != false {
		t.Error("the envelope does not follow its code")
	}
}
