package client

import (
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/servicetoken"
)

// Credentials are the SDK credentials that send the program's own token
// (its client at the organisation's provider, docs/operators.md#sign-in-on-the-cluster)
// with every call; nil when o names no client.
func Credentials(o config.OIDCClient) (sdkclient.Credentials, error) {
	f, err := servicetoken.Func(o)
	if err != nil || f == nil {
		return nil, err
	}
	return sdkclient.NewAPIKeyDynamicCredentials(f), nil
}

// applyToken gives so the program's token credentials when the
// configuration names a client and so has no credentials of its own.
func applyToken(so *sdkclient.Options, o config.OIDCClient) error {
	if so.Credentials != nil {
		return nil
	}
	creds, err := Credentials(o)
	if err != nil {
		return err
	}
	so.Credentials = creds
	return nil
}
