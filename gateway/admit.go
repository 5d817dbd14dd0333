package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/gateway/wire"
)

// admit runs the checks of a request before its body is read
// (docs/mcp.md#transport-checks): method, Host and Origin, the throttle of
// failed authentications, the bearer token, the media type. A refused
// request is answered here, its body unread, and ok is false.
func (f *front) admit(ctx context.Context, w http.ResponseWriter, r *http.Request, corr string) (actor Actor, ok bool) {
	if status, rerr := f.g.checkTransport(r, corr); rerr != nil {
		dropBody(w)
		if status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		writeError(w, status, nil, rerr)
		return Actor{}, false
	}
	client := f.g.clientOf(r)
	if after := f.g.authFailures.wait(client, time.Now()); after > 0 {
		f.g.log.Info("mcp client throttled after failed authentications", zap.String("correlation_id", corr))
		dropBody(w)
		w.Header().Set("Retry-After", strconv.Itoa(after))
		writeError(w, http.StatusTooManyRequests, nil, wire.NewErrorRetryAfter(corr, wire.ReasonAuthThrottled, after, nil,
			"too many failed authentications from this client; retry after %d s", after))
		return Actor{}, false
	}
	actor, rerr := f.g.authenticate(ctx, r.Header.Get("Authorization"), corr)
	if rerr != nil {
		// The body of a caller we do not know is never read: it cannot
		// hold the connection, and its id does not matter.
		dropBody(w)
		if reasonOf(rerr) == wire.ReasonDatabaseUnavailable {
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusServiceUnavailable, nil, rerr)
			return Actor{}, false
		}
		f.g.authFailures.fail(client, time.Now())
		challenge := `Bearer realm="cartwright-mcp"`
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"` // RFC 6750 §3: only when a token was sent
		}
		w.Header().Set("WWW-Authenticate", challenge)
		writeError(w, http.StatusUnauthorized, nil, rerr)
		return Actor{}, false
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		dropBody(w)
		writeError(w, http.StatusUnsupportedMediaType, nil, wire.NewError(corr, wire.ReasonUnsupportedMediaType,
			map[string]any{"content_type": truncate(ct, 64)}, "Content-Type must be application/json"))
		return Actor{}, false
	}
	return actor, true
}

// dropBody makes a refusal that does not read the body end the
// connection: without it the server would wait for the rest of the body
// (to reuse the connection) before and after answering, which a client
// that never sends it turns into a held connection.
func dropBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}
