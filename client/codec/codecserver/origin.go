package codecserver

import (
	"net/http"
	"slices"

	"go.uber.org/zap"
)

// refuseForeignOrigin answers 403 to a browser request from an origin that
// is not allowed, before a credential is checked or a byte is decoded
// (docs/support.md#codec-server-sign-in): CORS alone only hides the answer
// from the page, the decode would still happen and be logged. Allowed are
// requests without an Origin (the CLI, curl), the Web UI's origins, and,
// for the sign-in and sign-out pages only, the codec server's own origin
// (their forms post to themselves). It says whether the request may go on.
func (s *Server) refuseForeignOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || slices.Contains(s.origins, origin) {
		return true
	}
	if (r.URL.Path == LoginPath || r.URL.Path == LogoutPath) && origin == ownOrigin(r) {
		return true
	}
	s.logger.Warn("codec request from a foreign origin refused", zap.String("origin", origin), zap.String("path", r.URL.Path))
	http.Error(w, "requests from this origin are not allowed", http.StatusForbidden)
	return false
}

// ownOrigin is the origin a page served by this request's host has.
func ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
