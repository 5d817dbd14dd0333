package workflows

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/xeipuuv/gojsonschema"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Validate runs the workflow's own input check, and the request envelope
// check every tool call of the run will make, before a start: a caller
// learns about a bad input (INVALID_ARGUMENT naming the field) without
// creating a run. A run that fails on its input still holds the
// idempotency key, and the reuse policy then refuses a corrected start
// with the same key. It is for starters (the client package); the
// workflow never calls it.
func (in DraftOrderInput) Validate() error {
	id, err := DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	if err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	// check fills defaults in place; in is a copy.
	if err := in.check(id); err != nil {
		// check's ApplicationError carries a *toolkit.Error as its detail,
		// which toolkit.AsError cannot decode before it has crossed the
		// wire (ErrorDetailsValues.Get panics on the pointer): read the
		// code and message directly.
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) {
			return toolkit.Errorf(toolkit.Code(ae.Type()), "%s", ae.Message())
		}
		return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	return checkEnvelope(in.Request)
}

var (
	envelopeOnce   sync.Once
	envelopeSchema *gojsonschema.Schema
	envelopeErr    error
)

// checkEnvelope validates req against schemas/envelope.request.json as the
// invoker will, with the ids the workflow fills in per call.
func checkEnvelope(req toolkit.Request) error {
	envelopeOnce.Do(func() {
		b, err := schemas.FS.ReadFile("envelope.request.json")
		if err != nil {
			envelopeErr = err
			return
		}
		envelopeSchema, envelopeErr = gojsonschema.NewSchema(gojsonschema.NewBytesLoader(b))
	})
	if envelopeErr != nil {
		return toolkit.Errorf(toolkit.UpstreamError, "envelope schema: %v", envelopeErr)
	}
	if req.RequestID == "" {
		req.RequestID = "req-0000000000000000"
	}
	req.CorrelationID = "corr-0000000000000000"
	doc, err := json.Marshal(req)
	if err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "request: %v", err)
	}
	res, err := envelopeSchema.Validate(gojsonschema.NewBytesLoader(doc))
	if err != nil {
		return toolkit.Errorf(toolkit.InvalidArgument, "request: %v", err)
	}
	if res.Valid() {
		return nil
	}
	var msgs, fields []string
	for _, e := range res.Errors() {
		msgs = append(msgs, "request."+e.Description())
		fields = append(fields, "request."+e.Field())
	}
	return toolkit.Errorf(toolkit.InvalidArgument, "%s", strings.Join(msgs, "; ")).WithDetail("fields", fields)
}
