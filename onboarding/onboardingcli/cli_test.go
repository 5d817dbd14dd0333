package onboardingcli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/internal/config"
)

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"status"}, {"status", "-merchant", "jane@example.com"}, {"status", "-bogus"}} {
		var out, errOut bytes.Buffer
		if code := RunCLI(context.Background(), config.Config{}, args, &out, &errOut); code != ExitUsage {
			t.Fatalf("%v: exit %d", args, code)
		}
		if strings.Contains(errOut.String(), "jane@example.com") {
			t.Fatalf("%v: the error echoes the bad id: %s", args, errOut.String())
		}
	}
}
