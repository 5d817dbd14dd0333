package client

import (
	"context"
	"sync"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// startProbe records the server's answer to StartWorkflowExecution. With
// the USE_EXISTING conflict policy the server answers a start for a
// running id with that run and started=false; the SDK returns only the
// run, so the answer is read here, on the wire, for the one call whose
// context carries the probe.
type startProbe struct {
	mu       sync.Mutex
	answered bool
	started  bool
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

// startProbeInterceptor is a gRPC client interceptor; the SDK derives the
// call's context from the caller's, so the probe travels with it.
func startProbeInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	p, _ := ctx.Value(probeKey{}).(*startProbe)
	if p == nil || err != nil {
		return err
	}
	if resp, ok := reply.(*workflowservice.StartWorkflowExecutionResponse); ok {
		p.mu.Lock()
		p.answered, p.started = true, resp.GetStarted()
		p.mu.Unlock()
	}
	return nil
}
