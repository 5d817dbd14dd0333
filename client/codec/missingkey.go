package codec

import (
	"context"
	"errors"
	"regexp"
	"strconv"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// A workflow whose history holds a payload under a key id the worker's ring
// lacks cannot run its code: its input, a signal or an activity result is
// unreadable (docs/privacy.md#a-missing-payload-key). Failing the workflow
// would lose it, and handing its code an error would make it decide on
// nothing; so inside a workflow the decode stops the workflow task instead
// (a panic, which the SDK turns into a failed workflow task retried until
// the key is back), after a log line that names the key id and the run.

// missingKeyRe reads the key id back from the unknown-key message decrypt
// writes (the one place that message is made).
var missingKeyRe = regexp.MustCompile(`encrypted under key id ("(?:[^"\\]|\\.)*"), which this key ring`)

// MissingKeyIn is the key id an error message of a missing payload key
// names (a workflow task's failure, a query's error), if it is one.
func MissingKeyIn(msg string) (string, bool) {
	m := missingKeyRe.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	id, err := strconv.Unquote(m[1])
	return id, err == nil
}

// MissingKeyID is the key id err reports missing: the details.key_id of
// the codec's error (errors.Is(err, ErrUnknownKey)).
func MissingKeyID(err error) (string, bool) {
	if !errors.Is(err, ErrUnknownKey) {
		return "", false
	}
	var te *toolkit.Error
	if errors.As(err, &te) {
		if id, ok := te.Details["key_id"].(string); ok {
			return id, true
		}
	}
	return MissingKeyIn(err.Error())
}

// dataConverter is the codec's data converter as processes get it (Apply):
// the SDK's converter through the codec, plus the workflow behaviour above.
type dataConverter struct {
	converter.DataConverter
	log log.Logger // nil: the SDK's own "Workflow panic" line is the only one
}

var (
	_ converter.ContextAware                          = (*dataConverter)(nil)
	_ converter.DataConverterWithSerializationContext = (*dataConverter)(nil)
)

func (d *dataConverter) WithWorkflowContext(ctx converter.WorkflowContext) converter.DataConverter {
	inner := d.DataConverter
	if ca, ok := inner.(converter.ContextAware); ok {
		inner = ca.WithWorkflowContext(ctx)
	}
	return &inWorkflow{DataConverter: inner, ctx: ctx, log: d.log}
}

func (d *dataConverter) WithContext(ctx context.Context) converter.DataConverter {
	if ca, ok := d.DataConverter.(converter.ContextAware); ok {
		return &dataConverter{DataConverter: ca.WithContext(ctx), log: d.log}
	}
	return d
}

func (d *dataConverter) WithSerializationContext(sc converter.SerializationContext) converter.DataConverter {
	return &dataConverter{DataConverter: converter.WithDataConverterSerializationContext(d.DataConverter, sc), log: d.log}
}

// inWorkflow decodes inside one workflow's code.
type inWorkflow struct {
	converter.DataConverter
	ctx converter.WorkflowContext
	log log.Logger
}

func (w *inWorkflow) FromPayload(p *commonpb.Payload, v any) error {
	return w.stopOnMissingKey(w.DataConverter.FromPayload(p, v))
}

func (w *inWorkflow) FromPayloads(ps *commonpb.Payloads, v ...any) error {
	return w.stopOnMissingKey(w.DataConverter.FromPayloads(ps, v...))
}

func (w *inWorkflow) stopOnMissingKey(err error) error {
	id, missing := MissingKeyID(err)
	if !missing {
		return err
	}
	if w.log != nil {
		info := workflow.GetInfo(w.ctx)
		kv := []any{"key_id", id, "error", err.Error(), "workflow_id", info.WorkflowExecution.ID,
			"run_id", info.WorkflowExecution.RunID, "workflow_type", info.WorkflowType.Name}
		w.log.Error("payload key missing: this workflow cannot run until the key is added to CARTWRIGHT_PAYLOAD_KEYS", kv...)
	}
	panic(err.Error() + " (the workflow task is retried until then; nothing is lost)")
}
