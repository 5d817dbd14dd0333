package client

import (
	"io"

	"github.com/cartwright-dev/cartwright/internal/body"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// DecodeDraftOrderInput reads a draft order (the JSON of
// draftorder.DraftOrderInput) with toolkit.DecodeStrict: at most
// toolkit.MaxBodyBytes, one JSON object, no duplicate keys at any depth, no
// unknown fields, every field of its type. It does not validate the
// values; StartDraftOrder does (DraftOrderInput.Validate). Every failure is
// INVALID_ARGUMENT naming the field.
func DecodeDraftOrderInput(r io.Reader) (draftorder.DraftOrderInput, error) {
	var in draftorder.DraftOrderInput
	body, err := body.Read(r)
	if err != nil {
		return in, err
	}
	return in, toolkit.DecodeStrict(body, &in)
}
