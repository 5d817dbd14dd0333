package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `make dev` on other ports (STACK_*_PORT) has a state folder of its own;
// its summary names that folder's codec secret, where the stack wrote it,
// not the default stack's .data/codec.secret.
func TestDevSummaryNamesThisStacksCodecSecret(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", `. "`+root+`/scripts/lib.sh"; load_profile dev; dev_summary`)
	cmd.Env = append(os.Environ(), "STACK_TEMPORAL_PORT=7991", "STACK_UI_PORT=9991", "STACK_STRIPE_PORT=12991")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(dev secret: .data/dev-7991-9991-12991/codec.secret)") {
		t.Fatalf("summary:\n%s", out)
	}
	_ = os.RemoveAll(filepath.Join(root, ".data", "dev-7991-9991-12991")) // load_profile made the folder
}
