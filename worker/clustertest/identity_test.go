package clustertest

// The attack tests of the cluster's authorizer (docs/operators.md#who-may-do-what-on-the-cluster):
// every call to the frontend carries a token of the organisation's provider
// (or the internode certificate), and what it may do is
// deploy/temporal/authorization.yaml's. Before the authorizer (the frontend
// ran --allow-no-auth) every one of these calls was let in.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

func permissionDenied(err error) bool {
	var pd *serviceerror.PermissionDenied
	return errors.As(err, &pd)
}

// TestOnlyTheWorkerIdentityPollsCartwrightsQueue: a worker of one's own on
// cartwright's task queue (the attack of "trust nothing inside") is
// refused with any identity but the worker's: the backend's and the
// gateway's tokens, an admin's, and the client certificate alone. Nor does
// a forged task token complete an activity.
func TestOnlyTheWorkerIdentityPollsCartwrightsQueue(t *testing.T) {
	c := load(t)
	for name, tok := range map[string]string{
		"no token":       "",
		"backend token":  c.serviceToken(t, "cartwright-backend"),
		"gateway token":  c.serviceToken(t, "cartwright-mcp-gateway"),
		"an admin token": c.staffToken(t, "ada.admin"),
	} {
		tc := c.dialAs(t, tok)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := tc.WorkflowService().PollWorkflowTaskQueue(ctx, &workflowservice.PollWorkflowTaskQueueRequest{
			Namespace: "default", Identity: "intruder", TaskQueue: &taskqueuepb.TaskQueue{Name: "cartwright", Kind: enumspb.TASK_QUEUE_KIND_NORMAL}})
		if !permissionDenied(err) {
			t.Errorf("%s polling cartwright's queue: %v, want PermissionDenied", name, err)
		}
		_, err = tc.WorkflowService().PollActivityTaskQueue(ctx, &workflowservice.PollActivityTaskQueueRequest{
			Namespace: "default", Identity: "intruder", TaskQueue: &taskqueuepb.TaskQueue{Name: "cartwright", Kind: enumspb.TASK_QUEUE_KIND_NORMAL}})
		if !permissionDenied(err) {
			t.Errorf("%s polling cartwright's activities: %v, want PermissionDenied", name, err)
		}
		_, err = tc.WorkflowService().RespondActivityTaskCompleted(ctx, &workflowservice.RespondActivityTaskCompletedRequest{
			Namespace: "default", TaskToken: []byte("forged"), Identity: "intruder"})
		if !permissionDenied(err) {
			t.Errorf("%s completing a forged activity task: %v, want PermissionDenied", name, err)
		}
		cancel()
	}
}

// TestSupportCannotTerminateOrReset: a support member's token reads the
// order but cannot terminate or reset it, nor start one; the admin's can
// terminate it.
func TestSupportCannotTerminateOrReset(t *testing.T) {
	c := load(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	// The backend (the environment's identity) starts an order, which
	// waits for its user.
	opts, err := client.OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h, err := cl.StartDraftOrder(ctx, orderInput("identity-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err != nil {
		t.Fatalf("the backend starting a draft order: %v", err)
	}
	id := h.WorkflowID
	if _, err := cl.WaitForAction(ctx, id, time.Now().Add(testenv.Deadline(time.Minute))); err != nil {
		t.Fatalf("the order does not wait for its user: %v", err)
	}
	backend := c.dialAs(t, c.serviceToken(t, "cartwright-backend"))
	support := c.dialAs(t, c.staffToken(t, "sam.support"))
	if _, err := support.DescribeWorkflowExecution(ctx, id, ""); err != nil {
		t.Fatalf("support reading the order: %v", err)
	}
	if err := support.TerminateWorkflow(ctx, id, "", "support tries"); !permissionDenied(err) {
		t.Errorf("support terminating: %v, want PermissionDenied", err)
	}
	_, err = support.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{Namespace: "default",
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id}, WorkflowTaskFinishEventId: 3, RequestId: id})
	if !permissionDenied(err) {
		t.Errorf("support resetting: %v, want PermissionDenied", err)
	}
	if _, err := support.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id + "-s", TaskQueue: "cartwright"}, "DraftOrder"); !permissionDenied(err) {
		t.Errorf("support starting an order: %v, want PermissionDenied", err)
	}
	if err := backend.TerminateWorkflow(ctx, id, "", "the backend tries"); !permissionDenied(err) {
		t.Errorf("the backend terminating: %v, want PermissionDenied", err)
	}
	admin := c.dialAs(t, c.staffToken(t, "ada.admin"))
	if err := admin.TerminateWorkflow(ctx, id, "", "identity test cleanup"); err != nil {
		t.Fatalf("admin terminating: %v", err)
	}
}

// TestTokensNotTheProvidersAreRefused: no token, an expired token of the
// provider, and tokens the provider did not sign are refused; the same
// member's fresh token is let in.
func TestTokensNotTheProvidersAreRefused(t *testing.T) {
	c := load(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	// One connection, dialled with a good token; each call then carries
	// the token under test (the claim mapper refuses a bad one before any
	// authorizer runs, so a dial with it fails already).
	good := c.staffToken(t, "sam.support")
	current := good
	tc := c.dialWith(t, sdkclient.NewAPIKeyDynamicCredentials(func(context.Context) (string, error) { return current, nil }))
	list := func(tok string) error {
		current = tok
		_, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1})
		return err
	}
	if err := list(good); err != nil {
		t.Fatalf("support's own token: %v", err)
	}
	kid, _ := jwtHeader(t, good)["kid"].(string)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	forge := func(iss string) string {
		m := claims(t, good)
		m["iss"] = iss
		return signRS256(t, other, kid, m)
	}
	for name, tok := range map[string]string{
		"no token":                           "",
		"signed by another key, same issuer": forge(c.issuer(t)),
		"of another issuer":                  forge("http://127.0.0.1:1/"),
		"garbage":                            "not-a-jwt",
	} {
		if err := list(tok); !permissionDenied(err) {
			t.Errorf("%s: %v, want PermissionDenied", name, err)
		}
	}
	// An expired token of the provider itself: the Web UI's client issues
	// 3-second tokens for a moment (its lifespans, restored after).
	setLifespan(t, c, "3s")
	short := c.staffToken(t, "sam.support")
	setLifespan(t, c, "")
	if err := list(short); err != nil {
		t.Fatalf("a fresh short-lived token: %v", err)
	}
	exp := time.Unix(int64(claims(t, short)["exp"].(float64)), 0)
	testenv.WaitFor(t, 30*time.Second, "the short token to expire", func() (bool, error) { return time.Now().After(exp.Add(time.Second)), nil })
	if err := list(short); !permissionDenied(err) {
		t.Errorf("an expired token: %v, want PermissionDenied", err)
	}
}

// TestWebUIAPIWithoutSignInIs401: the Web UI's API answers nothing to a
// caller who has not signed in.
func TestWebUIAPIWithoutSignInIs401(t *testing.T) {
	c := load(t)
	c.issuer(t)
	resp, err := http.Get("http://" + c.port(t, 15) + "/api/v1/namespaces/default/workflows")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the Web UI's API without sign-in: %s, want 401", resp.Status)
	}
}

func orderInput(key string) draftorder.Input {
	return draftorder.Input{
		Request: toolkit.Request{UserID: "u_cluster", IdempotencyKey: key, Currency: "EUR",
			Actor:  toolkit.Actor{Type: toolkit.ActorUser, ID: "u_cluster"},
			Client: toolkit.Client{App: "backend", Version: "clustertest"}},
		Order: commerce.Order{
			Items:  []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}},
			ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"},
		},
	}
}
