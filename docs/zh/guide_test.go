package zh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The guide is a set of Chinese Markdown pages, each with a title, linked from README.md; WriteTo writes them
// all, byte for byte.
func TestGuidePages(t *testing.T) {
	ps, err := Pages()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 6 {
		t.Fatalf("%d pages, want at least 6", len(ps))
	}
	index := ps["README.md"]
	for name, text := range ps {
		if !strings.HasPrefix(text, "# ") {
			t.Errorf("%s does not start with a title", name)
		}
		if strings.Count(text, "。") < 5 {
			t.Errorf("%s: fewer than 5 Chinese sentences", name)
		}
		if name != "README.md" && !strings.Contains(index, "("+name+")") {
			t.Errorf("README.md does not link %s", name)
		}
	}
	dir := t.TempDir()
	paths, err := WriteTo(filepath.Join(dir, "zh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(ps) {
		t.Fatalf("wrote %d files for %d pages", len(paths), len(ps))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || string(b) != ps[filepath.Base(p)] {
			t.Errorf("%s: %v (content equal: %v)", p, err, string(b) == ps[filepath.Base(p)])
		}
	}
}
