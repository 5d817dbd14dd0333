package client

import (
	"context"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// Options configure a Client. Every field is explicit: New reads no
// environment. OptionsFromEnv builds them from the standard environment
// (the starter and most services use it); a zero Options dials
// localhost:7233, namespace default, task queue "cartwright", with the
// workflows' own default windows.
type Options struct {
	// Temporal are the SDK connection options: HostPort, Namespace, TLS,
	// Credentials … (Logger and Identity below override theirs).
	Temporal sdkclient.Options
	// TaskQueue the workflows are started on; "" means "cartwright".
	TaskQueue string
	// Defaults fill what a draft order or onboarding input leaves empty,
	// so the values are in the run's history.
	Defaults Defaults
	// Logger receives the SDK's log; nil discards it.
	Logger *zap.Logger
	// Identity names this caller in workflow histories; "" is the SDK's
	// default (pid@host).
	Identity string
	// AckTimeout bounds how long Cancel waits, after its signal, to see
	// the run end cancelled (or refuse); 0 means 10 s, a negative value
	// does not wait. Confirm, Approve and Reject get the workflow's own
	// answer (Workflow Updates) and wait as long as their ctx allows.
	AckTimeout time.Duration
}

// Defaults are the windows and threshold a start fills in when the input
// leaves them empty (zero fields: the workflows' own defaults).
type Defaults = draftorder.StartDefaults

// DefaultTaskQueue is the task queue of a zero Options.
const DefaultTaskQueue = "cartwright"

// OptionsFromEnv reads Options from the environment, the default source:
// the Temporal SDK's environment configuration (TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY, TEMPORAL_PROFILE)
// and cartwright's (CARTWRIGHT_TASK_QUEUE, CARTWRIGHT_CONFIRM_WINDOW,
// _APPROVAL_WINDOW, _APPROVAL_CONFIDENCE, _ONBOARDING_DEADLINE). A bad
// value is INVALID_ARGUMENT.
func OptionsFromEnv() (Options, error) {
	cfg, err := config.Load()
	if err != nil {
		return Options{}, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	so, err := SDKOptionsFromEnv(nil)
	if err != nil {
		return Options{}, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	return Options{
		Temporal: so, TaskQueue: cfg.TaskQueue,
		Defaults: Defaults{
			ConfirmWindow: cfg.ConfirmWindow, ApprovalWindow: cfg.ApprovalWindow,
			ApprovalConfidence: cfg.ApprovalConfidence, OnboardingDeadline: cfg.OnboardingDeadline,
			PaymentPollEvery: cfg.PaymentPollEvery, RefundApprovalAbove: cfg.RefundApprovalAbove,
			RefundRestock: cfg.RefundRestock, ReturnWindow: cfg.ReturnWindow,
		},
	}, nil
}

// Client is a connection to Temporal plus the defaults cartwright's
// workflows are started with. It is safe for concurrent use.
type Client struct {
	tc        sdkclient.Client
	dc        converter.DataConverter // the payload codec's, for reading histories and memos
	defaults  Defaults
	taskQueue string
	namespace string
	hostPort  string
	ack       time.Duration
	// rates is the workers' last answer about the exchange rates in use
	// (checkRates).
	rates ratesCache
}

// New connects to Temporal with opts (and checks that it answers).
func New(ctx context.Context, opts Options) (*Client, error) {
	so := opts.Temporal
	so.Logger = TemporalLogger(zap.NewNop())
	if opts.Logger != nil {
		so.Logger = TemporalLogger(opts.Logger)
	}
	if opts.Identity != "" {
		so.Identity = opts.Identity
	}
	if err := ensureCodec(&so); err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	// The probe tells StartDraftOrder whether the server started a run or
	// attached to a running one; the SDK does not expose that answer.
	so.ConnectionOptions.DialOptions = append(append([]grpc.DialOption(nil), so.ConnectionOptions.DialOptions...),
		grpc.WithChainUnaryInterceptor(startProbeInterceptor))
	c := &Client{
		dc: so.DataConverter, defaults: opts.Defaults, taskQueue: opts.TaskQueue, namespace: so.Namespace, hostPort: so.HostPort,
		ack: opts.AckTimeout,
	}
	if c.taskQueue == "" {
		c.taskQueue = DefaultTaskQueue
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
	tc, err := sdkclient.DialContext(ctx, so)
	if err != nil {
		return nil, c.unreachable(err)
	}
	c.tc = tc
	return c, nil
}

// Close closes the connection.
func (c *Client) Close() { c.tc.Close() }

// Reachable asks the frontend's health check: nil when Temporal answers,
// else UPSTREAM_ERROR saying it cannot be reached. It tells an outage
// apart from a slow workflow or a missing worker, which time out with the
// server up.
func (c *Client) Reachable(ctx context.Context) error {
	if _, err := c.tc.CheckHealth(ctx, &sdkclient.CheckHealthRequest{}); err != nil {
		return c.unreachable(err)
	}
	return nil
}

// Temporal is the underlying SDK client, for what this package does not
// wrap (listing workflows, schedules …).
func (c *Client) Temporal() sdkclient.Client { return c.tc }

// Namespace is the Temporal namespace the client uses.
func (c *Client) Namespace() string { return c.namespace }

// Address is the Temporal frontend address the client dialled.
func (c *Client) Address() string { return c.hostPort }

// TaskQueue is the task queue workflows are started on.
func (c *Client) TaskQueue() string { return c.taskQueue }
