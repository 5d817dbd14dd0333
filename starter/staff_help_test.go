package main

import (
	"strings"
	"testing"
)

// `starter staff token --help` names this stack's codec server, not the
// dev default's port 8089 whatever the stack.
func TestStaffTokenHelpNamesThisStacksCodecServer(t *testing.T) {
	t.Setenv("CARTWRIGHT_CODEC_URL", "http://127.0.0.1:9376/codec")
	r := runCLI(t, "", "staff", "token", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "http://127.0.0.1:9376/codec/login") ||
		!strings.Contains(r.stdout, "--codec-endpoint http://127.0.0.1:9376/codec") || strings.Contains(r.stdout, "8089") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
