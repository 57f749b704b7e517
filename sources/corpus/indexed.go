package corpus

import (
	"os"
	"path/filepath"
	"sort"
)

// Indexed lists the folders the indexes in the default location (DefaultDir) were built over, sorted and without
// duplicates: what this user has already indexed. It reads each index's current generation's info.json and
// nothing else; an index it cannot read is left out.
func Indexed() []string {
	base := filepath.Dir(DefaultDir("."))
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		name, err := readCurrent(dir)
		if err != nil || name == "" {
			continue
		}
		info, err := readGenInfo(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for _, r := range info.Roots {
			if filepath.IsAbs(r) && !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return out
}
