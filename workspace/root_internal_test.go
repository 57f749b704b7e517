package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// Resolve checks a path, then the operation runs; if a directory is swapped for a link to elsewhere in between,
// the operation itself must still refuse to leave the root.
func TestOperationsRefuseALinkSwappedInAfterTheCheck(t *testing.T) {
	w, err := New(t.TempDir(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(w.Root(), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := w.Resolve("sub/file.txt")
	if err != nil {
		t.Fatal(err)
	}
	// The swap.
	if err := os.Remove(filepath.Join(w.Root(), "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.Root(), "sub")); err != nil {
		t.Fatal(err)
	}
	if err := w.fs.WriteFile(w.rel(abs), []byte("escaped"), 0o644); err == nil {
		t.Fatal("the write followed the swapped-in link out of the workspace")
	}
	if _, err := os.Stat(filepath.Join(outside, "file.txt")); !os.IsNotExist(err) {
		t.Fatalf("a file appeared outside the workspace: %v", err)
	}
}
