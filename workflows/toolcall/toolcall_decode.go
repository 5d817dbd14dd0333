package toolcall

import (
	"encoding/json"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// UnmarshalJSON decodes a tool call workflow's input as strictly as the CLI
// and the client decode a call (toolkit.DecodeStrict: no duplicate keys at
// any depth, no unknown fields, every field of its type), so a call
// started by a bare SDK or `temporal workflow start` is held to the same
// contract. It never fails: a decoding error here would fail the workflow
// task again and again; the refusal is kept for the workflow, which ends
// with it as INVALID_ARGUMENT.
func (in *Input) UnmarshalJSON(b []byte) error {
	type plain Input // the same fields, without this method
	var p plain
	if err := toolkit.DecodeStrict(b, &p); err != nil {
		var lax plain
		_ = json.Unmarshal(b, &lax)
		*in = Input(lax)
		in.refused = toolkit.AsError(err)
		return nil
	}
	*in = Input(p)
	return nil
}
