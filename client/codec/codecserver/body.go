package codecserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// countPayloads reads the request's Payloads (protobuf JSON) to count them
// for the access log, and hands back a body the SDK's handler can read
// again.
func countPayloads(r *http.Request) (io.ReadCloser, int, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("read request: %v", err)
	}
	var ps commonpb.Payloads
	if err := protojson.Unmarshal(data, &ps); err != nil {
		return nil, 0, fmt.Errorf("request is not Payloads JSON: %v", err)
	}
	return io.NopCloser(bytes.NewReader(data)), len(ps.GetPayloads()), nil
}
