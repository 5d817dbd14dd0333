package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/converter"

	"github.com/cartwright-dev/cartwright/client/codec"
)

// missingKeys checks, before anything else, that dc can decrypt every
// payload of h: one finding per payload key id it cannot, naming the id,
// how many payloads are under it and the first event holding one. Without
// the key the replay, the envelopes and the markers cannot be read, and
// every check after them would report the evidence of what it could not
// read as missing or extra — telling an auditor genuine evidence was
// forged (docs/privacy.md#a-missing-payload-key).
func missingKeys(ctx context.Context, h *historypb.History, dc converter.DataConverter) ([]Finding, error) {
	type use struct {
		first int64
		count int
	}
	tried := map[string]bool{} // key id -> dc holds it
	missing := map[string]*use{}
	for _, e := range h.GetEvents() {
		eventID := e.GetEventId()
		err := proxy.VisitPayloads(ctx, e, proxy.VisitPayloadsOptions{
			SkipSearchAttributes: true,
			Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
				for _, p := range ps {
					id := codec.KeyIDOf(p)
					if id == "" {
						continue
					}
					held, seen := tried[id]
					if !seen {
						var raw json.RawMessage
						_, lacks := codec.MissingKeyID(dc.FromPayload(p, &raw))
						held, tried[id] = !lacks, !lacks
					}
					if held {
						continue
					}
					if missing[id] == nil {
						missing[id] = &use{first: eventID}
					}
					missing[id].count++
				}
				return ps, nil
			},
		})
		if err != nil {
			return nil, errf("read the payloads of event %d: %v", eventID, err)
		}
	}
	ids := make([]string, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Finding, 0, len(ids))
	for _, id := range ids {
		out = append(out, Finding{Kind: KindMissingPayloadKey, EventID: missing[id].first, Detail: fmt.Sprintf(
			"payload key %q is not in this key ring (CARTWRIGHT_PAYLOAD_KEYS): %d payload(s) under it, the first in event %d; nothing else was checked: add the key and audit again",
			id, missing[id].count, missing[id].first)})
	}
	return out, nil
}
