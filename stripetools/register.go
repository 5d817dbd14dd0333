package stripetools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// RegisterTools adds the three Stripe tools to reg, all served by c.
func RegisterTools(reg *toolkit.Registry, c *Client) error {
	if c == nil {
		return errors.New("stripetools: RegisterTools needs a Client")
	}
	for _, t := range []struct {
		spec toolkit.Spec
		h    toolkit.Handler
	}{
		{AccountStatusSpec(), c.accountStatus},
		{RelinkURLSpec(), c.relink},
		{LoginLinkSpec(), c.loginLink},
	} {
		if err := reg.Register(t.spec, t.h); err != nil {
			return err
		}
	}
	return nil
}

// RawReader is the evidence store's audited read of an encrypted raw
// output (evidence.Store.ReadRaw).
type RawReader interface {
	ReadRaw(ctx context.Context, snapshotID, reader, reason string) (json.RawMessage, error)
}

// RevealedLink is a link ready to hand to the merchant's browser.
type RevealedLink struct {
	URL       string
	ExpiresAt string
}

// RevealLink returns the URL a link tool call stored in evidence snapshot
// snapshotID. reader names who asks (the merchant's session service); the
// evidence store logs the read. The URL is checked against the hash kept in
// clear, so a mixed-up snapshot cannot hand out another merchant's link.
func RevealLink(ctx context.Context, ev RawReader, snapshotID, wantHash, reader string) (RevealedLink, error) {
	raw, err := ev.ReadRaw(ctx, snapshotID, reader, "reveal onboarding link to the merchant session")
	if err != nil {
		return RevealedLink{}, err
	}
	var l Link
	if err := json.Unmarshal(raw, &l); err != nil {
		return RevealedLink{}, fmt.Errorf("snapshot %s does not hold a link: %w", snapshotID, err)
	}
	if l.Secret == "" || URLHash(l.Secret) != l.URLSHA256 || (wantHash != "" && wantHash != l.URLSHA256) {
		return RevealedLink{}, fmt.Errorf("snapshot %s does not hold the expected link", snapshotID)
	}
	return RevealedLink{URL: l.Secret, ExpiresAt: l.ExpiresAt}, nil
}
