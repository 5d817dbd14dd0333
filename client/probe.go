package client

import (
	"context"
	"sync"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// startProbe records the server's answer to StartWorkflowExecution (or
// the start of an Update-with-Start). With the USE_EXISTING conflict
// policy the server answers a start for a running id with that run and
// started=false; the SDK returns only the run, so the answer is read here,
// on the wire, for the one call whose context carries the probe.
type startProbe struct {
	mu       sync.Mutex
	answered bool
	started  bool
	run      string
	// request is the request id of the start this call sent.
	request string
}

type probeKey struct{}

func withStartProbe(ctx context.Context) (context.Context, *startProbe) {
	p := &startProbe{}
	return context.WithValue(ctx, probeKey{}, p), p
}

// result reports whether the server answered and whether it started a
// new run. The SDK retries transient failures, so the last answer wins.
func (p *startProbe) result() (answered, started bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answered, p.started
}

// requestID is the request id of the Update-with-Start's start ("" for a
// plain start).
func (p *startProbe) requestID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.request
}

// runID is the run the server answered with ("" before an answer).
func (p *startProbe) runID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run
}

// startProbeInterceptor is a gRPC client interceptor; the SDK derives the
// call's context from the caller's, so the probe travels with it.
func startProbeInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	p, _ := ctx.Value(probeKey{}).(*startProbe)
	if p == nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := req.(*workflowservice.ExecuteMultiOperationRequest); ok && len(m.GetOperations()) > 0 {
		p.request = m.GetOperations()[0].GetStartWorkflow().GetRequestId()
	}
	if err != nil {
		return err
	}
	switch resp := reply.(type) {
	case *workflowservice.StartWorkflowExecutionResponse:
		p.answered, p.started, p.run = true, resp.GetStarted(), resp.GetRunId()
	case *workflowservice.ExecuteMultiOperationResponse:
		// Update-with-Start: the SDK repeats the call until the update is
		// durable, and a repeat finds the run its first call started. The
		// first answer says whether this call started it.
		if rs := resp.GetResponses(); len(rs) > 0 && rs[0].GetStartWorkflow() != nil && !p.answered {
			s := rs[0].GetStartWorkflow()
			p.answered, p.started, p.run = true, s.GetStarted(), s.GetRunId()
		}
	}
	return nil
}
