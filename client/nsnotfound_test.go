package client

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// describeOnly is a Temporal client whose only working call is
// DescribeNamespace, answering describeErr.
type describeOnly struct {
	sdkclient.Client
	svc describeService
}

func (d describeOnly) WorkflowService() workflowservice.WorkflowServiceClient { return d.svc }

type describeService struct {
	workflowservice.WorkflowServiceClient
	err error
}

func (s describeService) DescribeNamespace(context.Context, *workflowservice.DescribeNamespaceRequest, ...grpc.CallOption) (*workflowservice.DescribeNamespaceResponse, error) {
	return &workflowservice.DescribeNamespaceResponse{}, s.err
}

// TestNamespaceNotFoundWhileTheDatabaseIsDown: Temporal's frontend answers
// NamespaceNotFound when its database is unreachable (seen in the cluster
// fault matrix's PostgreSQL outage); the client asks again with
// DescribeNamespace and answers a retryable UPSTREAM_ERROR then, NOT_FOUND
// only when the namespace really does not exist.
func TestNamespaceNotFoundWhileTheDatabaseIsDown(t *testing.T) {
	spurious := serviceerror.NewNamespaceNotFound("default")
	for _, c := range []struct {
		name     string
		describe error
		want     toolkit.Code
	}{
		{"database down", serviceerror.NewUnavailable("GetNamespace operation failed. Error no usable database connection found"), toolkit.UpstreamError},
		{"namespace exists after all", nil, toolkit.UpstreamError},
		{"namespace missing", serviceerror.NewNamespaceNotFound("default"), toolkit.NotFound},
	} {
		cl := &Client{tc: describeOnly{svc: describeService{err: c.describe}}, namespace: "default", hostPort: "127.0.0.1:7233"}
		err := cl.wrap(spurious, "draft-order/u/k", "start")
		var te *toolkit.Error
		if !errors.As(err, &te) || te.Code != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
		if got := te.Code.Retryable(); got != (c.want == toolkit.UpstreamError) {
			t.Errorf("%s: retryable %v", c.name, got)
		}
	}
}
