// Package zh holds the Chinese user guide of deepresearch (the Markdown pages in this folder) and embeds it, so
// that a binary or a test can use the guide as a Chinese corpus without the source tree at hand.
package zh

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

//go:embed *.md
var pages embed.FS

// Pages returns the guide's pages: file name → Markdown text.
func Pages() (map[string]string, error) {
	names, err := fs.Glob(pages, "*.md")
	if err != nil {
		return nil, fmt.Errorf("zh guide: %w", err)
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		b, err := pages.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("zh guide %s: %w", n, err)
		}
		out[n] = string(b)
	}
	return out, nil
}

// WriteTo writes the guide's pages into dir (created if missing) and returns the paths written.
func WriteTo(dir string) ([]string, error) {
	ps, err := Pages()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("zh guide: %w", err)
	}
	var paths []string
	for name, text := range ps {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("zh guide: %w", err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, nil
}
