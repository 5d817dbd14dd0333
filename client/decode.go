package client

import (
	"io"

	"github.com/cartwright-dev/cartwright/internal/body"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// DecodeDraftOrderInput reads a draft order (the JSON of
// draftorder.Input) with toolkit.DecodeStrict: at most
// toolkit.MaxBodyBytes, one JSON object, no duplicate keys at any depth, no
// unknown fields, every field of its type. It does not validate the
// values; StartDraftOrder does (draftorder.Input.Validate). Every failure is
// INVALID_ARGUMENT naming the field.
func DecodeDraftOrderInput(r io.Reader) (draftorder.Input, error) {
	var in draftorder.Input
	body, err := body.Read(r)
	if err != nil {
		return in, err
	}
	return in, toolkit.DecodeStrict(body, &in)
}
