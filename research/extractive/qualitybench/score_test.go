package qualitybench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// The scoring of a report against a real corpus index: relevant citations by file and heading, fragments of
// every kind, repeated claims and the "not covered" line.
func TestScoring(t *testing.T) {
	dir := t.TempDir()
	text := "# Guide\n\n## Channels\n\nA memory operation is modeled by four details:\n\n- its kind\n- its location\n\n" +
		"For HTTP/2 requests, the Go HTTP server permits\nonly one stream at a time.\n\nThe closing of a channel is synchronized before a receive.\n\n" +
		"## Locks\n\nAn unlock is synchronized before the next lock.\n"
	path := filepath.Join(dir, "guide.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.md")
	if err := os.WriteFile(other, []byte("# Other\n\nThe closing of a channel is synchronized before a receive.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Add(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	ev := func(id, quote, file string, line int) research.Evidence {
		return research.Evidence{ID: id, Quote: quote, Claim: quote, Source: corpus.FileURL(file, line, line+1)}
	}
	rep := &research.Report{
		Language: "en",
		Markdown: "## Summary\n\nThe closing of a channel is synchronized before a receive [1].This rule holds [2].\n",
		Evidence: []research.Evidence{
			ev("e1", "A memory operation is modeled by four details:", path, 5),
			ev("e2", "For HTTP/2 requests, the Go HTTP server permits", path, 10),
			ev("e3", "The closing of a channel is synchronized before a receive.", path, 13),
			ev("e4", "An unlock is synchronized before the next lock.", path, 17),
			ev("e5", "The closing of a channel is synchronized before a receive.", other, 3),
		},
		Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}, {N: 2, EvidenceIDs: []string{"e2"}},
			{N: 3, EvidenceIDs: []string{"e3"}}, {N: 4, EvidenceIDs: []string{"e4"}}, {N: 5, EvidenceIDs: []string{"e5"}}},
		CitationMap: []research.Conclusion{
			{Text: "A memory operation is modeled by four details [1].", EvidenceIDs: []string{"e1"}},
			{Text: "The closing of a channel is synchronized before a receive [3].", EvidenceIDs: []string{"e3"}},
			{Text: "Its kind and location [4].", EvidenceIDs: []string{"e4"}},
			{Text: "are synchronized before a receive [3].", EvidenceIDs: []string{"e3"}},                         // a piece of e3's sentence
			{Text: "The closing of a channel is synchronized before a receive [3].", EvidenceIDs: []string{"e3"}}, // again, after e4
		},
	}
	if n := RelevantCitations(t.Context(), rep, ix, []string{"guide.md#channels"}); n != 3 {
		t.Errorf("relevant citations %d, want 3 (e1-e3: under Channels; e4 under Locks, e5 in other.md)", n)
	}
	if n := RelevantCitations(t.Context(), rep, ix, []string{"guide.md", "other.md"}); n != 5 {
		t.Errorf("relevant citations %d, want 5", n)
	}
	frags := strings.Join(Fragments(t.Context(), rep, ix), "\n")
	for _, want := range []string{"ends in a colon: A memory", "cut mid-sentence: For HTTP/2", "no verb: Its kind", "split inside its quote: are synchronized", "glued"} {
		if !strings.Contains(frags, want) {
			t.Errorf("fragments lack %q:\n%s", want, frags)
		}
	}
	if strings.Contains(frags, "closing of a channel") {
		t.Errorf("a whole sentence counted as a fragment:\n%s", frags)
	}
	reps := Repeats(rep)
	if len(reps) != 2 {
		t.Errorf("repeats %q, want e3 cited twice and e5 the same claim as e3", reps)
	}
	for _, tt := range []struct {
		md, lang string
		want     bool
	}{
		{"### Not covered: the sources say nothing about errgroup.", "en", true},
		{"## What is X? — no grounded evidence found", "en", false},
		{"### 未涵盖：所检索的来源没有提到 Word。", "zh", true},
		{"## 摘要（在所检索的来源中未找到可靠证据）", "zh", false},
	} {
		if got := SaysNotCovered(tt.md, tt.lang); got != tt.want {
			t.Errorf("SaysNotCovered(%q) = %v", tt.md, got)
		}
	}
}

func TestCodeWithRemark(t *testing.T) {
	for q, want := range map[string]bool{
		"children map[canceler]struct{} // set to nil by the first cancel call":     true,
		"mu       sync.Mutex            // protects following fields":               true,
		"count = 0 # reset the counter before the loop":                             true,
		"cause    error                 // set to non-nil by the first cancel call": true,
		"parent is already canceled // not a declaration":                           false,
		"the rest of a sentence cut short":                                          false,
	} {
		if got := codeWithRemark(q); got != want {
			t.Errorf("codeWithRemark(%q) = %v, want %v", q, got, want)
		}
	}
}

// The furniture check flags navigation, a caption on its own and a comment taken out of a code block, and
// passes a sentence of the prose and a whole quoted code block.
func TestFurniture(t *testing.T) {
	dir := t.TempDir()
	text := "# Ownership\n\nEach value in Rust has an owner.\n\n```rust\nfn main() {\n    // The backing memory is freed here\n}\n```\n\n" +
		"Listing 4-5: Returning ownership of parameters\n\nPress S or / to search in the book.\n\n<!-- YAML\nadded: v0.7.8\n-->\n"
	path := filepath.Join(dir, "own.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := corpus.Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Add(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	src := corpus.FileURL(path, 1, 13)
	rep := &research.Report{
		Citations: []research.Citation{{N: 1, EvidenceIDs: []string{"e1"}}, {N: 2, EvidenceIDs: []string{"e2"}}, {N: 3, EvidenceIDs: []string{"e3"}}, {N: 4, EvidenceIDs: []string{"e4"}},
			{N: 5, EvidenceIDs: []string{"e5"}}},
		Evidence: []research.Evidence{
			{ID: "e1", Quote: "Each value in Rust has an owner.", Source: src},
			{ID: "e2", Quote: "The backing memory is freed here", Source: src},
			{ID: "e3", Quote: "Listing 4-5: Returning ownership of parameters", Source: src},
			{ID: "e4", Quote: "Press S or / to search in the book.", Source: src},
			{ID: "e5", Quote: "<!-- YAML\nadded: v0.7.8", Source: src},
		},
		CitationMap: []research.Conclusion{
			{Text: "Each value in Rust has an owner [1].", EvidenceIDs: []string{"e1"}},
			{Text: "The backing memory is freed here [2].", EvidenceIDs: []string{"e2"}},
			{Text: "Listing 4-5: Returning ownership of parameters [3].", EvidenceIDs: []string{"e3"}},
			{Text: "Press S or / to search in the book [4].", EvidenceIDs: []string{"e4"}},
			{Text: "<!-- YAML added: v0.7.8 [5].", EvidenceIDs: []string{"e5"}},
		},
	}
	got := Furniture(t.Context(), rep, ix)
	want := []string{"navigation: Press S", "caption: Listing 4-5", "comment out of its code: The backing", "markup: <!-- YAML"}
	if len(got) != len(want) {
		t.Fatalf("furniture %q, want %d items", got, len(want))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("furniture %q lacks %q", got, w)
		}
	}
}
