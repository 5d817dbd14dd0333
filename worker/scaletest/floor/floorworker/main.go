// Command floorworker serves the Temporal floor's two variants (package
// floor) on one task queue until SIGTERM or SIGINT. `make bench` builds and
// starts it beside the draft-order worker, on the same dev server, so the
// two are measured the same way: each in a process of its own.
//
//	floorworker -addr 127.0.0.1:7290 -task-queue floor-1 [-namespace default] [-workflow-pollers 4] [-activity-pollers 4]
//
// TLS comes from the SDK's environment settings (TEMPORAL_TLS_*), as the
// draft-order worker's does: `make bench BENCH_TARGET=cluster` measures
// both on the cluster's mTLS frontend.
//
// It prints READY once it polls, and nothing else on stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/worker/scaletest/floor"
)

func main() {
	addr := flag.String("addr", "", "Temporal frontend host:port (required)")
	namespace := flag.String("namespace", "default", "namespace")
	queue := flag.String("task-queue", "", "task queue to poll (required)")
	wfPollers := flag.Int("workflow-pollers", 4, "workflow task pollers, as cartwright's worker has")
	actPollers := flag.Int("activity-pollers", 4, "activity task pollers, as cartwright's worker has")
	flag.Parse()
	if *addr == "" || *queue == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := serve(ctx, *addr, *namespace, *queue, *wfPollers, *actPollers); err != nil {
		log.Fatalf("floorworker: %v", err)
	}
}

// serve polls until ctx ends. The client has the SDK's default data
// converter: no payload codec, because the floor measures Temporal alone.
func serve(ctx context.Context, addr, namespace, queue string, wfPollers, actPollers int) error {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return fmt.Errorf("temporal client configuration: %w", err)
	}
	c, err := sdkclient.DialContext(ctx, sdkclient.Options{HostPort: addr, Namespace: namespace,
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: opts.ConnectionOptions.TLS}})
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer c.Close()
	w := worker.New(c, queue, worker.Options{
		MaxConcurrentWorkflowTaskPollers: wfPollers,
		MaxConcurrentActivityTaskPollers: actPollers,
	})
	floor.Register(w)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker on %s: %w", queue, err)
	}
	defer w.Stop()
	fmt.Println("READY")
	<-ctx.Done()
	return nil
}
