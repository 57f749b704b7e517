package request

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A root admits itself and what lies below it once links are resolved, and nothing else: not a sibling whose name
// starts like it, not its parent through "..", not a link inside it that points out, not /proc/self; a link from
// outside into a root resolves to the folder inside.
func TestRoots(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "shared")
	for _, d := range []string{filepath.Join(root, "notes"), filepath.Join(base, "shared-not"), filepath.Join(base, "private")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "private"), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "notes"), filepath.Join(base, "in")); err != nil {
		t.Fatal(err)
	}
	r := NewRoots(root, "", root+"/.", filepath.Join(base, "later"))
	if got := r.Dirs(); len(got) != 2 || got[0] != root {
		t.Errorf("Dirs = %q, want the root once and the folder that does not exist yet", got)
	}
	for path, want := range map[string]string{
		root:                               root,
		filepath.Join(root, "notes"):       filepath.Join(root, "notes"),
		filepath.Join(base, "in"):          filepath.Join(root, "notes"),
		filepath.Join(root, "notes", ".."): root,
	} {
		if got, err := r.Resolve(path); err != nil || got != want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, path := range []string{filepath.Join(base, "shared-not"), filepath.Join(root, ".."), filepath.Join(root, "out"), "/etc", "/proc/self", "/"} {
		_, err := r.Resolve(path)
		if !errors.Is(err, ErrOutsideRoots) || !strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "--root") {
			t.Errorf("Resolve(%s) = %v, want ErrOutsideRoots naming the roots and --root", path, err)
		}
	}
	if _, err := r.Resolve(filepath.Join(root, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing folder: %v", err)
	}
	if _, err := r.Resolve(root + "\x00/etc"); err == nil {
		t.Error("a NUL byte was accepted")
	}
	if _, err := (Roots{}).Resolve(root); !errors.Is(err, ErrOutsideRoots) {
		t.Errorf("no roots admit %s: %v", root, err)
	}
	// The filesystem root as a root admits everything without doubling its separator.
	if got, err := NewRoots("/").Resolve("/etc"); err != nil || got != "/etc" {
		t.Errorf("root / : %q %v", got, err)
	}
}
