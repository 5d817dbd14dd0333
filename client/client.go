package client

import (
	"context"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Options tune a Client. The zero value reads everything from the
// environment.
type Options struct {
	// TaskQueue the workflows are started on; "" means the configured one
	// (CARTWRIGHT_TASK_QUEUE, default "cartwright").
	TaskQueue string
	// Logger receives the SDK's log; nil discards it.
	Logger *zap.Logger
	// Identity names this caller in workflow histories; "" is the SDK's
	// default (pid@host).
	Identity string
	// AckTimeout bounds how long a signal helper waits to see whether the
	// workflow accepted the signal (by polling the status query); 0 means
	// 10 s, a negative value does not wait.
	AckTimeout time.Duration
	// PollInterval is the status-query polling interval of the wait
	// helpers; 0 means 100 ms.
	PollInterval time.Duration
}

// Client is a connection to Temporal plus the defaults cartwright's
// workflows are started with. It is safe for concurrent use.
type Client struct {
	tc        sdkclient.Client
	cfg       config.Config
	taskQueue string
	namespace string
	hostPort  string
	ack       time.Duration
	poll      time.Duration
}

// New connects to Temporal (and checks that it answers).
func New(ctx context.Context, opts Options) (*Client, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	so, err := SDKOptionsFromEnv(opts.Logger)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	if opts.Logger == nil {
		// The SDK's default logger writes to stderr; a CLI and most
		// services want their own logger or none.
		so.Logger = TemporalLogger(zap.NewNop())
	}
	if opts.Identity != "" {
		so.Identity = opts.Identity
	}
	// The probe tells StartDraftOrder whether the server started a run or
	// attached to a running one; the SDK does not expose that answer.
	so.ConnectionOptions.DialOptions = append(so.ConnectionOptions.DialOptions,
		grpc.WithChainUnaryInterceptor(startProbeInterceptor))
	c := &Client{
		cfg: cfg, taskQueue: cfg.TaskQueue, namespace: so.Namespace, hostPort: so.HostPort,
		ack: opts.AckTimeout, poll: opts.PollInterval,
	}
	if opts.TaskQueue != "" {
		c.taskQueue = opts.TaskQueue
	}
	if c.namespace == "" {
		c.namespace = sdkclient.DefaultNamespace
	}
	if c.hostPort == "" {
		c.hostPort = sdkclient.DefaultHostPort
	}
	if c.ack == 0 {
		c.ack = 10 * time.Second
	}
	if c.poll <= 0 {
		c.poll = 100 * time.Millisecond
	}
	tc, err := sdkclient.DialContext(ctx, so)
	if err != nil {
		return nil, c.unreachable(err)
	}
	c.tc = tc
	return c, nil
}

// Close closes the connection.
func (c *Client) Close() { c.tc.Close() }

// Temporal is the underlying SDK client, for what this package does not
// wrap (listing workflows, schedules …).
func (c *Client) Temporal() sdkclient.Client { return c.tc }

// Namespace is the Temporal namespace the client uses.
func (c *Client) Namespace() string { return c.namespace }

// Address is the Temporal frontend address the client dialled.
func (c *Client) Address() string { return c.hostPort }

// TaskQueue is the task queue workflows are started on.
func (c *Client) TaskQueue() string { return c.taskQueue }
