package research

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/deepresearch/deepresearch/internal/atomicfile"
)

// ---- files ----

// writeFileAtomic replaces a run file whole, so a reader — or a resume after kill -9 — never sees half of one.
func writeFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o644) }

func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
