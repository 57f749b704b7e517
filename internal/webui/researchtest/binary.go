package researchtest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildBinary builds cmd/deepresearch into a temporary folder, for tests that drive the real program (over stdio,
// a pseudo-terminal, or a client from another implementation).
func BuildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deepresearch")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/deepresearch/deepresearch/cmd/deepresearch").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
