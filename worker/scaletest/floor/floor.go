// Package floor is the Temporal floor `make bench` measures draft orders
// against (docs/performance.md#temporal-floor): a workflow in the draft
// order's shape — three activities in parallel (pricing, shipping,
// compliance), then three in sequence (duties, total, the write), each
// sequential one given the result before it — whose activities do no work
// at all. Floor6 runs them as regular activities, Floor6Local as local
// ones, and Floor6LocalConfirm as local ones in the draft order's two
// round trips (the total, then the user's confirmation). Whatever a draft order costs beyond the variant of its shape is
// cartwright's own; nothing can cost less on the same server.
//
// The payloads are small, as a one-line draft order's are (an order of
// about 300 bytes of JSON in, results of about 300 bytes out), and every
// activity carries a timeout and a retry policy, as a real step does.
// floor/floorworker serves the variants on a task queue of its own, in a
// process of its own (so its CPU is measured apart); the bench drives them
// with a plain SDK client, without cartwright's payload codec: the floor is
// Temporal alone.
package floor

import (
	"context"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The variants' workflow type names.
const (
	Floor6      = "Floor6"
	Floor6Local = "Floor6Local"
)

// LastStep is the Step of a variant's result: the write, which ran last.
const LastStep = "create_draft_order"

// Order is a variant's input: an order as small as a draft order's.
type Order struct {
	ID       string      `json:"order_id"`
	Customer string      `json:"customer_id"`
	Currency string      `json:"currency"`
	Lines    []OrderLine `json:"lines"`
	// Country, Region and Postal are where the order goes.
	Country string `json:"country"`
	Region  string `json:"region"`
	Postal  string `json:"postal"`
}

// OrderLine is one line of an Order.
type OrderLine struct {
	SKU       string `json:"sku"`
	Quantity  int    `json:"quantity"`
	UnitCents int64  `json:"unit_cents"`
}

// NewOrder is the order every variant runs, under its own id.
func NewOrder(id string) Order {
	return Order{
		ID: id, Customer: "cust-0000000042", Currency: "EUR",
		Lines: []OrderLine{
			{SKU: "TSHIRT-ORG-M-BLK", Quantity: 2, UnitCents: 1999},
			{SKU: "HOODIE-ORG-L-GRY", Quantity: 1, UnitCents: 4950},
		},
		Country: "DE", Region: "BE", Postal: "10115",
	}
}

// Step is what each activity receives: the order and, for the sequential
// steps, the result of the step before.
type Step struct {
	Order Order   `json:"order"`
	Prev  *Result `json:"prev,omitempty"`
}

// Result is what each activity returns.
type Result struct {
	Step        string `json:"step"`
	OrderID     string `json:"order_id"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Ref         string `json:"ref"`
	After       string `json:"after,omitempty"`
	// Padding brings a result to the size of a small tool answer.
	Padding string `json:"padding"`
}

var padding = strings.Repeat("-", 160)

// stepNames are the six activities, as registered: the three parallel
// ones, then the three sequential ones.
var stepNames = [6]string{"pricing", "shipping", "compliance", "duties", "total", LastStep}

// noop is an activity that does nothing but answer: the result names its
// step and the step before, and carries the order's subtotal.
func noop(name string) func(context.Context, Step) (Result, error) {
	return func(_ context.Context, in Step) (Result, error) {
		var sub int64
		for _, l := range in.Order.Lines {
			sub += int64(l.Quantity) * l.UnitCents
		}
		r := Result{Step: name, OrderID: in.Order.ID, AmountCents: sub, Currency: in.Order.Currency,
			Ref: name + "/" + in.Order.ID, Padding: padding}
		if in.Prev != nil {
			r.After = in.Prev.Step
		}
		return r, nil
	}
}

// Registry is what Register needs of a worker (or of the SDK's test
// environment).
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register puts the variants and their six activities on a worker.
func Register(w Registry) {
	w.RegisterWorkflowWithOptions(runRegular, workflow.RegisterOptions{Name: Floor6})
	w.RegisterWorkflowWithOptions(runLocal, workflow.RegisterOptions{Name: Floor6Local})
	w.RegisterWorkflowWithOptions(runConfirm, workflow.RegisterOptions{Name: Floor6LocalConfirm})
	for _, name := range stepNames {
		w.RegisterActivityWithOptions(noop(name), activity.RegisterOptions{Name: name})
	}
}

// retry and the 30 s timeouts are generous: a no-op never needs them, they
// only make the SDK and the server carry the same options a real step has.
var retry = &temporal.RetryPolicy{MaximumAttempts: 3}

func runRegular(ctx workflow.Context, o Order) (Result, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry})
	return shape(ctx, o, workflow.ExecuteActivity)
}

func runLocal(ctx workflow.Context, o Order) (Result, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 30 * time.Second, RetryPolicy: retry})
	return shape(ctx, o, workflow.ExecuteLocalActivity)
}

// execute is workflow.ExecuteActivity or workflow.ExecuteLocalActivity.
type execute func(ctx workflow.Context, activity any, args ...any) workflow.Future

// shape runs the draft order's shape: the first three steps at once, then
// the other three one after the other, each given the result before it.
// Both kinds are called by their registered names.
func shape(ctx workflow.Context, o Order, exec execute) (Result, error) {
	return steps(ctx, o, exec, len(stepNames), nil)
}

// steps runs the shape's steps before the n-th: from the start when after
// is nil, else from the step after the one whose result after is, that
// step's result its input.
func steps(ctx workflow.Context, o Order, exec execute, n int, after *Result) (Result, error) {
	call := func(i int, in Step) workflow.Future { return exec(ctx, stepNames[i], in) }
	var prev Result
	next := 3
	if after != nil {
		prev = *after
		for i, name := range stepNames {
			if name == after.Step {
				next = i + 1
			}
		}
	} else {
		first := []workflow.Future{call(0, Step{Order: o}), call(1, Step{Order: o}), call(2, Step{Order: o})}
		for i, f := range first {
			var r Result
			if err := f.Get(ctx, &r); err != nil {
				return Result{}, err
			}
			if i == 0 {
				prev = r
			}
		}
	}
	for i := next; i < n; i++ {
		var r Result
		if err := call(i, Step{Order: o, Prev: &prev}).Get(ctx, &r); err != nil {
			return Result{}, err
		}
		prev = r
	}
	return prev, nil
}
