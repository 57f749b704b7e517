package qualitybench

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// heldOutFile is the file whose questions were split into the tune and held-out halves when they were written;
// questions added later are tune questions and must keep off the held-out half's pages.
const heldOutFile = "questions_debiandocs.yaml"

// TestTuneQuestionsKeepOffHeldOutPages: a tune question written after the split must not be answered by a page
// a held-out question names (in the same corpus). Tuning the engine on such a question — often the held-out
// question again in other words or the other language — would tune it on the held-out half and inflate its
// figures. Drop or rewrite the tune question to a page no held-out question names; never move or edit the
// held-out questions.
func TestTuneQuestionsKeepOffHeldOutPages(t *testing.T) {
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	original, err := questionFiles.ReadFile(heldOutFile)
	if err != nil {
		t.Fatal(err)
	}
	var first []Question
	if err := yaml.Unmarshal(original, &first); err != nil {
		t.Fatal(err)
	}
	inFirst := map[string]bool{}
	heldPages := map[[2]string]string{} // corpus, page → held-out question id
	for _, q := range first {
		inFirst[q.ID] = true
		if q.Split != SplitHeldOut {
			continue
		}
		for _, r := range q.Relevant {
			heldPages[[2]string{q.Corpus, pageOf(r)}] = q.ID
		}
	}
	if len(heldPages) == 0 {
		t.Fatal("no held-out pages: the held-out half is missing")
	}
	for _, q := range qs {
		if inFirst[q.ID] || q.Split == "" {
			continue
		}
		if q.Split != SplitTune {
			t.Errorf("%s: questions added after the split are tune questions, not %q", q.ID, q.Split)
		}
		for _, r := range q.Relevant {
			if h, ok := heldPages[[2]string{q.Corpus, pageOf(r)}]; ok {
				t.Errorf("tune question %s is answered by %s, a page of held-out question %s: drop it or ask about a page no held-out question names", q.ID, r, h)
			}
		}
	}
}

// pageOf strips a "#heading" from a relevant document's name.
func pageOf(relevant string) string {
	page, _, _ := strings.Cut(relevant, "#")
	return page
}

// TestRelevantPagesAreInTheirCorpus: every page a question over a Debian documentation tree names as relevant is
// a file of that corpus (by name, as the score matches it). A question about a page the corpus leaves out — the
// pydocs corpus holds the tutorial, HOWTOs, FAQ and glossary, not the library reference — can never be answered
// and would count as an engine failure.
func TestRelevantPagesAreInTheirCorpus(t *testing.T) {
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]map[string]bool{} // corpus → file names
	for _, name := range []string{CorpusPyDocs, CorpusPgDocs, CorpusNodeDocs, CorpusRustBook} {
		paths, err := corpusPaths[name](Options{DebianDocs: DebianDocs})
		if err != nil {
			t.Fatal(err)
		}
		files[name] = map[string]bool{}
		for _, p := range paths {
			err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				files[name][d.Name()] = true
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v (the test script installs the Debian documentation packages)", name, err)
			}
		}
	}
	for _, q := range qs {
		names, ok := files[q.Corpus]
		if !ok {
			continue
		}
		for _, r := range q.Relevant {
			if !names[pageOf(r)] {
				t.Errorf("%s: relevant page %s is not in the %s corpus", q.ID, r, q.Corpus)
			}
		}
	}
}
