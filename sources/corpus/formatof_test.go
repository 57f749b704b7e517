package corpus

import "github.com/deepresearch/deepresearch/sources/extract"

// formatOf is the built-in format of path, as an index with no Options.Formats reads it.
func formatOf(path string) (format, bool) { return extract.Builtin().ByPath(path) }
