package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileIgnore is a .gitignore of 199 patterns "a*b", "a*a*b", … whose
// regular expressions grew with every star, and names made to try them all.
func hostileIgnore() string { return starPatterns("b") }

// starPatterns is 199 patterns "a*end", "a*a*end", ….
func starPatterns(end string) string {
	var b strings.Builder
	b.WriteString("\n")
	for i := 1; i < 200; i++ {
		b.WriteString(strings.Repeat("a*", i) + end + "\n")
	}
	return b.String()
}

// hostileName is a 200-character file name every pattern of hostileIgnore
// has to be tried on (it holds each pattern's longest literal, "a").
func hostileName(i int) string {
	return fmt.Sprintf("%s%04d.md", strings.Repeat("a", 193), i)
}

// BenchmarkHostileIgnore scans a folder of files with 200-character names
// under a hostile .gitignore; it reports the time per name (the whole cost
// of the scan divided by the files). "issue" is the .gitignore of patterns
// "a*…*b"; "ends-in-d" patterns "a*z*a*…*d" that start and end as
// the names do and hold no literal a name lacks but "z", so that every
// pattern runs its automaton over the whole name.
//
//	go test ./sources/corpus -run '^$' -bench HostileIgnore -benchtime 5x
func BenchmarkHostileIgnore(b *testing.B) {
	for _, tc := range []struct{ name, ignore string }{
		{"issue", hostileIgnore()},
		{"ends-in-d", strings.ReplaceAll(starPatterns("d"), "\na*", "\na*z*")},
		{"none", ""},
	} {
		b.Run(tc.name, func(b *testing.B) { benchIgnore(b, tc.ignore) })
	}
}

func benchIgnore(b *testing.B, ignore string) {
	const files = 50
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(ignore), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, hostileName(i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ix, err := Open(filepath.Join(b.TempDir(), "idx"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		var st Stats
		found, err := ix.scan(b.Context(), []root{{path: dir, dir: true}}, &st)
		if err != nil || len(found) != files {
			b.Fatalf("found %d of %d: %v", len(found), files, err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*files), "µs/name")
}
