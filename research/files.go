package research

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deepresearch/deepresearch/base/runfolder"
)

// ---- files ----
//
// Every file of a run folder is opened through base/runfolder (regular files only, no links out of the
// folder, non-blocking opens, bounded reads); a test walks the code for any other open.

// writeRunFile replaces the file name (relative, slash-separated) inside the run folder dir whole, so a
// reader — or a resume after kill -9 — never sees half of one.
func writeRunFile(dir, name string, data []byte) error { return runfolder.WriteFile(dir, name, data) }

// writeFileAtomic replaces a file that lies directly in its run folder (report.md, a round's snapshot).
func writeFileAtomic(path string, data []byte) error {
	dir, name := runfolder.Split(path)
	return writeRunFile(dir, name, data)
}

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

// makeRunFolder creates the run folder dir (the caller's path, links and all) and its docs/ inside it, refusing
// a docs/ that is a link out of the folder.
func makeRunFolder(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return runfolder.MkdirAll(dir, DocsDir)
}

// MaxRunFileBytes bounds one file read from a run folder.
const MaxRunFileBytes = runfolder.MaxFileBytes

// ReadRunFile reads the file name (relative, as a run folder records it) inside runDir. A run folder may come
// from someone else, so what it names is untrusted: the read goes through runfolder.ReadFile, which refuses
// "..", absolute names and symbolic links that lead out of the folder, anything but a regular file (a FIFO
// never blocks the reader) and files over MaxRunFileBytes.
func ReadRunFile(runDir, name string) ([]byte, error) {
	return runfolder.ReadFile(runDir, name, MaxRunFileBytes)
}
