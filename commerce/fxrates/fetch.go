package fxrates

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"
)

// Fetcher reads the feed at URL (config CARTWRIGHT_FX_FEED_URL; never an
// input a caller chooses).
type Fetcher struct {
	URL string
	// Client is http.DefaultClient with Timeout when nil.
	Client *http.Client
	// Timeout bounds one fetch (default 30s).
	Timeout time.Duration
}

// ErrNotConfigured: the worker has no feed URL (CARTWRIGHT_FX_FEED_URL),
// or not an http(s) one.
var ErrNotConfigured = errors.New("fxrates: no exchange-rate feed configured (CARTWRIGHT_FX_FEED_URL)")

// ErrUnavailable wraps a fetch that did not get a feed (network, status):
// worth retrying, unlike ErrMalformed.
var ErrUnavailable = errors.New("fxrates: feed unavailable")

// Feed is a fetched, parsed feed.
type Feed struct {
	Days []Day
	// Source is the URL without user info, query or fragment (they may
	// hold a key): what the stored rows name.
	Source string
	// SHA256 is the digest of the body as received.
	SHA256 [32]byte
}

// Fetch GETs the feed and parses it. A status other than 200, a body that
// is not XML, larger than MaxFeedBytes, or not a well-formed ECB feed is
// refused.
func (f Fetcher) Fetch(ctx context.Context, now time.Time) (Feed, error) {
	u, err := url.Parse(f.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Feed{}, fmt.Errorf("%w: the URL must be http(s)://host/…", ErrNotConfigured)
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return Feed{}, err
	}
	req.Header.Set("Accept", "application/xml, text/xml")
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// The error may quote the URL (with its key): name the host only.
		return Feed{}, fmt.Errorf("%w: GET %s: %v", ErrUnavailable, u.Host, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Feed{}, fmt.Errorf("%w: GET %s: status %d", ErrUnavailable, u.Host, resp.StatusCode)
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || (mt != "text/xml" && mt != "application/xml") {
		return Feed{}, fmt.Errorf("%w: content type %q is not XML", ErrMalformed, clip(resp.Header.Get("Content-Type")))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxFeedBytes+1))
	if err != nil {
		return Feed{}, fmt.Errorf("%w: read %s: %v", ErrUnavailable, u.Host, err)
	}
	if len(body) > MaxFeedBytes {
		return Feed{}, fmt.Errorf("%w: body over %d bytes", ErrMalformed, MaxFeedBytes)
	}
	days, err := Parse(body, now)
	if err != nil {
		return Feed{}, err
	}
	src := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path} // no user info, query or fragment
	return Feed{Days: days, Source: src.String(), SHA256: sha256.Sum256(body)}, nil
}
