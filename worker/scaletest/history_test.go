package scaletest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/stripefake"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// Temporal's default limits the histories are held against (the server's
// limit.blobSize.warn / .error and limit.historySize.warn; Temporal Cloud
// uses the same): a payload over 512 KiB is warned about and over 2 MiB
// fails the task; a history over 10 MiB is warned about (50 MiB or 51,200
// events terminates the run).
const (
	payloadWarnBytes = 512 << 10
	historyWarnBytes = 10 << 20
)

// historySize is what one run's history weighs.
type historySize struct {
	Events       int
	Bytes        int
	JSONBytes    int    // as the archive stores it (protojson, before sealing)
	LargestBytes int    // the largest payload of any event
	LargestEvent string // its event type
}

func measureHistory(ctx context.Context, t *testing.T, tc sdkclient.Client, id, runID string) historySize {
	t.Helper()
	var hs historySize
	var all historypb.History
	it := tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		all.Events = append(all.Events, e)
		hs.Events++
		hs.Bytes += proto.Size(e)
		if n := largestPayload(e); n > hs.LargestBytes {
			hs.LargestBytes, hs.LargestEvent = n, e.GetEventType().String()
		}
	}
	if b, err := protojson.Marshal(&all); err == nil {
		hs.JSONBytes = len(b)
	}
	return hs
}

// largestPayload is the size of the event's attributes: an upper bound of
// its largest payload (inputs, results, signal bodies).
func largestPayload(e *historypb.HistoryEvent) int {
	return proto.Size(e) - proto.Size(&historypb.HistoryEvent{EventId: e.EventId, EventTime: e.EventTime, EventType: e.EventType})
}

func (h historySize) String() string {
	return fmt.Sprintf("%d events, %.1f KiB (%.1f KiB as JSON), largest event %.1f KiB (%s)", h.Events, float64(h.Bytes)/1024,
		float64(h.JSONBytes)/1024, float64(h.LargestBytes)/1024, h.LargestEvent)
}

// TestHistorySizes weighs the two histories the limits bite on first — a
// draft order of a 50-line cart (the schemas' maximum) and an onboarding
// that waits long, woken over and over by its merchant — against
// Temporal's payload and history limits, and logs the numbers
// deploy/SCALING.md uses.
func TestHistorySizes(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(5*time.Minute))
	defer cancel()
	fake := stripefake.New()
	t.Cleanup(fake.Close)
	ws := wiringtest.StartWith(t, wiringtest.Options{Configure: func(c *config.Config) {
		c.StripeSecretKey, c.StripeAPIBase, c.StripeWebhookSecret = stripeKey, fake.URL, stripeSecret
	}})
	ws.Env(t)
	cl, err := client.New(ctx, envOptions(t, ws.TaskQueue))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	id, err := driveOrderInput(ctx, cl, fiftyLineCart(ctx, t, ws.Pool))
	if err != nil {
		t.Fatal(err)
	}
	cart := measureHistory(ctx, t, ws.Temporal, id, "")
	t.Logf("draft order, 50 lines: %s", cart)
	one, err := driveOrder(ctx, cl, "hist-1-"+randomHex(6))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("draft order, 1 line: %s", measureHistory(ctx, t, ws.Temporal, one, ""))

	// An onboarding its merchant leaves and returns to 20 times.
	m := seedMerchants(ctx, t, ws.Pool, fake, 1)[0]
	h, err := cl.StartOnboarding(ctx, onboardingflow.Input{MerchantID: m.id, Deadline: time.Hour, StatusRetryDelay: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ws.TerminateLater(t, h.WorkflowID)
	waitOnboarding(ctx, t, cl, m.id, onboardingflow.StateAwaitingMerchant)
	const returns = 20
	for i := 0; i < returns; i++ {
		before, err := cl.OnboardingStatus(ctx, m.id)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.Returned(ctx, m.id, i%2 == 1); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, "the return's status read", func() (bool, error) {
			st, err := cl.OnboardingStatus(ctx, m.id)
			return err == nil && st.StatusReads > before.StatusReads, err
		})
	}
	ob := measureHistory(ctx, t, ws.Temporal, h.WorkflowID, "")
	perEvent := float64(ob.Bytes) / float64(ob.Events)
	atCAN := perEvent * onboardingflow.DefaultContinueAsNewAfter
	t.Logf("onboarding, %d returns: %s; %.0f B/event, so %.0f KiB when it continues as new at %d events",
		returns, ob, perEvent, atCAN/1024, onboardingflow.DefaultContinueAsNewAfter)

	for name, h := range map[string]historySize{"50-line draft order": cart, "onboarding": ob} {
		if h.LargestBytes > payloadWarnBytes {
			t.Errorf("%s: an event of %d bytes is over Temporal's payload warning (%d)", name, h.LargestBytes, payloadWarnBytes)
		}
	}
	if cart.Bytes > historyWarnBytes || atCAN > historyWarnBytes {
		t.Errorf("history over Temporal's 10 MiB warning: cart %d B, onboarding at continue-as-new %.0f B", cart.Bytes, atCAN)
	}
}

// fiftyLineCart is a draft order of 50 lines (the schemas' maximum). The
// sample catalog has 48 products, some of which compliance holds up, so
// the test's own database gets 50 T-shirt variants (one line per SKU is
// the rule).
func fiftyLineCart(ctx context.Context, t *testing.T, pool *pgxpool.Pool) draftorder.Input {
	t.Helper()
	if _, err := pool.Exec(ctx, `
		INSERT INTO catalog_products SELECT (jsonb_populate_record(NULL::catalog_products,
			to_jsonb(p) || jsonb_build_object('sku', 'TEE-SCALE-' || n, 'title', p.title || ' #' || n))).*
		FROM catalog_products p, generate_series(1, 50) n WHERE p.sku = 'TEE-ORG-M-WHT';
		INSERT INTO catalog_stock (sku, on_hand) SELECT 'TEE-SCALE-' || n, 1000 FROM generate_series(1, 50) n`); err != nil {
		t.Fatal(err)
	}
	in := orderInput("hist-50-" + randomHex(6))
	in.Items = nil
	for i := 1; i <= 50; i++ {
		in.Items = append(in.Items, commerce.LineItem{SKU: fmt.Sprintf("TEE-SCALE-%d", i), Quantity: 1 + i%3})
	}
	return in
}

// maxDraftOrderEvents bounds a confirmed draft order's history
// (docs/performance.md#local-activities):
// the read-only tools are local activities, one marker each, whatever the
// cart holds.
const maxDraftOrderEvents = 30

// TestDraftOrderEventsDoNotGrowWithTheCart: a 50-line cart's draft order
// has no more history events than a 1-line one, and neither has more than
// maxDraftOrderEvents: the lines travel inside the tools' payloads, never
// as more calls or more workflow tasks.
func TestDraftOrderEventsDoNotGrowWithTheCart(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	ws := wiringtest.StartWith(t, wiringtest.Options{})
	ws.Env(t)
	cl, err := client.New(ctx, envOptions(t, ws.TaskQueue))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	one, err := driveOrder(ctx, cl, "events-1-"+randomHex(6))
	if err != nil {
		t.Fatal(err)
	}
	fifty, err := driveOrderInput(ctx, cl, fiftyLineCart(ctx, t, ws.Pool))
	if err != nil {
		t.Fatal(err)
	}
	h1, h50 := measureHistory(ctx, t, ws.Temporal, one, ""), measureHistory(ctx, t, ws.Temporal, fifty, "")
	t.Logf("1 line: %s; 50 lines: %s", h1, h50)
	if h50.Events > h1.Events || h1.Events > maxDraftOrderEvents {
		t.Fatalf("history events: 1 line %d, 50 lines %d; want the same count, at most %d", h1.Events, h50.Events, maxDraftOrderEvents)
	}
}
