package authz

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
)

// counting counts the signature checks of the mapper it wraps.
type counting struct {
	authorization.ClaimMapper
	calls int
}

func (c *counting) GetClaims(ai *authorization.AuthInfo) (*authorization.Claims, error) {
	c.calls++
	return c.ClaimMapper.GetClaims(ai)
}

// TestAVerifiedTokenIsCheckedOncePerMinute: the worker's token, sent with
// every call, is verified on the provider's keys once and its identity
// reused for VerifiedFor; after that, and past the token's expiry
// whatever comes first, it is verified again, and an expired token is
// refused although it was verified before. A token that failed is never
// remembered.
func TestAVerifiedTokenIsCheckedOncePerMinute(t *testing.T) {
	f := newFixture(t)
	c := &counting{ClaimMapper: f.mapper.jwt}
	f.mapper.jwt = c
	now := time.Now()
	f.mapper.now = func() time.Time { return now }
	worker := bearer(f.token(f.key, service("cartwright-worker")))
	for i := 0; i < 50; i++ {
		if !f.decide(worker, "PollWorkflowTaskQueue", poll("cartwright")) {
			t.Fatalf("call %d of the worker refused", i)
		}
	}
	if c.calls != 1 {
		t.Fatalf("50 calls with one token verified it %d times, want once", c.calls)
	}
	if f.decide(worker, "TerminateWorkflowExecution", &workflowservice.TerminateWorkflowExecutionRequest{Namespace: "default"}) {
		t.Fatal("a reused identity let the worker terminate")
	}
	now = now.Add(VerifiedFor + time.Second)
	if !f.decide(worker, "PollWorkflowTaskQueue", poll("cartwright")) || c.calls != 2 {
		t.Fatalf("after %s: %d verifications, want the token verified again", VerifiedFor, c.calls)
	}

	// A token about to expire is reused only until its expiry.
	short := service("cartwright-worker")
	short["exp"] = now.Add(10 * time.Second).Unix()
	tok := bearer(f.token(f.key, short))
	if !f.decide(tok, "PollWorkflowTaskQueue", poll("cartwright")) {
		t.Fatal("a live token refused")
	}
	now = now.Add(11 * time.Second)
	// The real clock has not moved: the default mapper would still accept
	// it, so mark the token expired for it too.
	short["exp"] = time.Now().Add(-time.Second).Unix()
	if f.decide(bearer(f.token(f.key, short)), "PollWorkflowTaskQueue", poll("cartwright")) {
		t.Fatal("an expired token let in")
	}
	before := c.calls
	if f.decide(tok, "PollWorkflowTaskQueue", poll("cartwright")) && c.calls == before {
		t.Fatal("a token past its expiry was let in on its remembered identity")
	}

	// Refused tokens are not remembered: each try is verified.
	forged := bearer(f.token(f.key, jwt.MapClaims{"iss": "http://evil.example/", "sub": "x", "client_id": "x",
		"exp": time.Now().Add(time.Hour).Unix()}))
	before = c.calls
	for i := 0; i < 3; i++ {
		if f.decide(forged, "ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}) {
			t.Fatal("a token of another issuer let in")
		}
	}
	if c.calls-before != 3 {
		t.Fatalf("three tries of a refused token verified %d times, want 3", c.calls-before)
	}
}
