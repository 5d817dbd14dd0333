package toolkit

import "unicode/utf8"

// requestTree is decodeJSON(json.Marshal(req)) without either: the
// envelope is schema-checked on every call (checkRequest), and turning it
// into JSON and back cost more than the check itself. It
// follows Request's json tags (omitempty drops an empty string and a false
// consent, never a struct); ok=false for a string json.Marshal would
// change (not valid UTF-8), where the caller marshals.
// TestRequestTreeIsMarshalledRequest holds it to every field of Request.
func requestTree(r Request) (map[string]any, bool) {
	m := make(map[string]any, 12)
	ok := true
	put := func(m map[string]any, key, v string, omitEmpty bool) {
		if v == "" && omitEmpty {
			return
		}
		ok = ok && utf8.ValidString(v)
		m[key] = v
	}
	put(m, "request_id", r.RequestID, false)
	actor := make(map[string]any, 2)
	put(actor, "type", string(r.Actor.Type), false)
	put(actor, "id", r.Actor.ID, false)
	m["actor"] = actor
	put(m, "user_id", r.UserID, false)
	put(m, "session_id", r.SessionID, true)
	put(m, "locale", r.Locale, true)
	put(m, "currency", r.Currency, true)
	put(m, "timezone", r.Timezone, true)
	client := make(map[string]any, 2)
	put(client, "app", r.Client.App, true)
	put(client, "version", r.Client.Version, true)
	m["client"] = client
	m["dry_run"] = r.DryRun
	put(m, "idempotency_key", r.IdempotencyKey, true)
	trace := make(map[string]any, 3)
	put(trace, "span_id", r.Trace.SpanID, true)
	put(trace, "parent_span_id", r.Trace.ParentSpanID, true)
	put(trace, "traceparent", r.Trace.Traceparent, true)
	m["trace"] = trace
	put(m, "correlation_id", r.CorrelationID, true)
	if r.Consent {
		m["consent"] = true
	}
	return m, ok
}
