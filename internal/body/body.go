package body

import (
	"io"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Read reads at most toolkit.MaxBodyBytes from r; a longer body is refused
// (INVALID_ARGUMENT) without reading the rest.
func Read(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, toolkit.MaxBodyBytes+1))
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "read body: %v", err)
	}
	if len(b) > toolkit.MaxBodyBytes {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "body is larger than %d bytes", toolkit.MaxBodyBytes)
	}
	return b, nil
}
