package gateway

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/cartwright-dev/cartwright/gateway/wire"
)

// checkTransport refuses, before anything is read, what the streamable
// HTTP transport refuses (docs/mcp.md#transport-checks): a method other
// than POST (405; the gateway is stateless, so there is no GET stream or
// DELETE of a session), a Host the gateway does not answer to and an
// Origin not on the allow-list (403: DNS rebinding protection). Every
// body, the legacy one included, passes here first.
func (g *Gateway) checkTransport(r *http.Request, corr string) (int, *jsonrpc.Error) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, wire.NewError(corr, wire.ReasonHTTPMethodNotAllowed,
			map[string]any{"method": truncate(r.Method, 16)}, "only POST is served at %s (stateless streamable HTTP)", Path)
	}
	if !g.hostAllowed(r) {
		return http.StatusForbidden, wire.NewError(corr, wire.ReasonHostNotAllowed, nil, "Host %q is not served here", truncate(r.Host, 128))
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		return http.StatusForbidden, wire.NewError(corr, wire.ReasonOriginNotAllowed, nil,
			"Origin %q is not allowed (CARTWRIGHT_MCP_ALLOWED_ORIGINS)", truncate(origin, 128))
	}
	return 0, nil
}

// hostAllowed: with an allow-list, the Host (with or without its port)
// must be on it. Without one, a request that reached a loopback address
// must name a loopback host, as the SDK does for the requests it sees: a
// page served from evil.example that rebinds its name to 127.0.0.1 still
// sends Host: evil.example.
func (g *Gateway) hostAllowed(r *http.Request) bool {
	host := r.Host
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	if len(g.opts.AllowedHosts) > 0 {
		return slices.ContainsFunc(g.opts.AllowedHosts, func(a string) bool {
			return strings.EqualFold(a, host) || strings.EqualFold(a, name)
		})
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return true
	}
	return isLoopback(name)
}

func isLoopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed: an Origin header comes from a browser; only the
// configured origins (scheme://host[:port], exact) may call. "null" and
// anything unparsable never pass.
func (g *Gateway) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false
	}
	norm := strings.ToLower(u.Scheme + "://" + u.Host)
	return slices.ContainsFunc(g.opts.AllowedOrigins, func(a string) bool {
		return strings.EqualFold(strings.TrimRight(a, "/"), norm)
	})
}

// clientOf is the address failed authentications are counted against
// (docs/mcp.md#throttling): the peer's IP, or, when the peer is one of the
// trusted proxies, the nearest address in X-Forwarded-For that is not.
func (g *Gateway) clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !g.trustedProxy(peer) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a forged or broken hop: count against what we know
		}
		if !g.trustedProxy(a) {
			return a.Unmap().String()
		}
	}
	return host
}

func (g *Gateway) trustedProxy(a netip.Addr) bool {
	a = a.Unmap()
	return slices.ContainsFunc(g.opts.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(a) })
}

// statusReasons names the SDK's own plain-text refusals.
var statusReasons = map[int]wire.Reason{
	http.StatusForbidden:             wire.ReasonHostNotAllowed,
	http.StatusMethodNotAllowed:      wire.ReasonHTTPMethodNotAllowed,
	http.StatusUnsupportedMediaType:  wire.ReasonUnsupportedMediaType,
	http.StatusNotAcceptable:         wire.ReasonNotAcceptable,
	http.StatusRequestEntityTooLarge: wire.ReasonRequestTooLarge,
}

// jsonErrors turns a plain-text error the SDK writes (http.Error) into a
// JSON-RPC error with data, keeping its status: every answer of /mcp is
// JSON-RPC (docs/mcp.md#error-data). Everything else passes through,
// flushes included (the SDK streams SSE).
type jsonErrors struct {
	http.ResponseWriter
	corr   string
	status int
	text   []byte
}

func (j *jsonErrors) WriteHeader(code int) {
	if code >= 400 && !strings.HasPrefix(j.Header().Get("Content-Type"), "application/json") {
		j.status = code
		return
	}
	j.ResponseWriter.WriteHeader(code)
}

func (j *jsonErrors) Write(b []byte) (int, error) {
	if j.status != 0 {
		if len(j.text) < 512 {
			j.text = append(j.text, b...)
		}
		return len(b), nil
	}
	return j.ResponseWriter.Write(b)
}

func (j *jsonErrors) Flush() {
	if f, ok := j.ResponseWriter.(http.Flusher); ok && j.status == 0 {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }

// finish writes the held plain-text error as JSON-RPC.
func (j *jsonErrors) finish() {
	if j.status == 0 {
		return
	}
	reason, ok := statusReasons[j.status]
	if !ok {
		reason = wire.ReasonInvalidRequest
		if j.status >= 500 {
			reason = wire.ReasonInternalError
		}
	}
	j.ResponseWriter.Header().Del("X-Content-Type-Options")
	writeError(j.ResponseWriter, j.status, nil, wire.NewError(j.corr, reason, map[string]any{"http_status": j.status},
		"%s", strings.TrimSpace(truncate(string(j.text), 200))))
}
