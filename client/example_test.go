package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// A backend starts a draft order, shows the user the total the start
// answered with, and confirms that total once the user agrees; the
// confirmation answers when the draft order exists. The same key twice is
// the same order (docs/backend.md#idempotency-keys). Then one tool on its
// own: durably (a tool call workflow; the same request id twice is the same
// call) and with evidence. A refusal would be an envelope too, with
// ok=false and its error.
//
// It needs a running stack (`make dev`, then `. .data/env`), so go test
// only compiles it; TestExamplesRunOnTheStack runs it against the test
// stack and checks that it prints:
//
//	NEEDS_USER_CONFIRMATION EUR
//	DRAFT_CREATED already done: false
//	the draft order's total is the confirmed one: true
//	pricing: true ok evidenced: true
func ExampleClient() {
	ctx := context.Background()
	opts, err := client.OptionsFromEnv() // TEMPORAL_*, CARTWRIGHT_TASK_QUEUE, the payload keys
	if err != nil {
		fmt.Println("options:", err)
		return
	}
	c, err := client.New(ctx, opts)
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer c.Close()

	h, err := c.StartDraftOrder(ctx, draftorder.Input{
		Request: toolkit.Request{UserID: "u_123", IdempotencyKey: fmt.Sprintf("order-%x", time.Now().UnixNano()),
			Currency: "EUR", Client: toolkit.Client{App: "backend"}},
		Order: commerce.Order{Items: []commerce.LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}}, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116",
			City: "Berlin", PostalCode: "10115", Country: "DE"}},
	})
	if err != nil {
		fmt.Println("start:", err) // INVALID_ARGUMENT names the field; nothing was started
		return
	}
	total := h.Status.Confirmation.GrandTotal // show this to the user
	fmt.Println(h.Status.State, total.Currency)

	ans, err := c.ConfirmResult(ctx, h.WorkflowID, h.Status.Confirmation.QuoteHash)
	if err != nil {
		fmt.Println("confirm:", err) // PRICE_CHANGED: show the new total and ask again
		return
	}
	fmt.Println(ans.Result.State, "already done:", ans.AlreadyDone)
	fmt.Println("the draft order's total is the confirmed one:", ans.Result.DraftOrder.GrandTotal == total)

	env, _, err := c.CallTool(ctx, toolkit.ToolCall{
		Tool: "pricing.get_realtime_quote",
		Request: toolkit.Request{RequestID: fmt.Sprintf("req-%x", time.Now().UnixNano()), UserID: "u_123",
			Actor: toolkit.Actor{Type: toolkit.ActorAgent, ID: "shop-agent"}},
		Input: json.RawMessage(`{"currency":"EUR","items":[{"sku":"TEE-ORG-M-WHT","quantity":2}]}`),
	}, time.Now().Add(30*time.Second))
	if err != nil {
		fmt.Println("call:", err)
		return
	}
	fmt.Println("pricing:", env.OK, env.Status, "evidenced:", env.SnapshotID() != "")
}

// TestExamplesRunOnTheStack runs ExampleClient against a worker on the
// test stack, as a reader would run it after `make dev`, and checks what it
// prints: the lines its comment promises.
func TestExamplesRunOnTheStack(t *testing.T) {
	s := wiringtest.Start(t)
	s.Env(t)
	want := "NEEDS_USER_CONFIRMATION EUR\nDRAFT_CREATED already done: false\n" +
		"the draft order's total is the confirmed one: true\npricing: true ok evidenced: true\n"
	if got := stdoutOf(t, ExampleClient); got != want {
		t.Errorf("ExampleClient printed\n%s\nwant\n%s", got, want)
	}
}

// stdoutOf is what run prints on os.Stdout.
func stdoutOf(t *testing.T, run func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&out, r); close(done) }()
	func() {
		defer func() { os.Stdout = saved; w.Close() }()
		run()
	}()
	<-done
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}
