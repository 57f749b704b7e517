package extractive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

// vocabSource is a searcher that knows its documents' words, as a corpus index does.
type vocabSource struct {
	fakeSearcher
	df  map[string]int
	err error
}

func (v vocabSource) DocFreq(_ context.Context, word string) (int, int, error) {
	if v.err != nil {
		return 0, 0, v.err
	}
	return v.df[word], 10000, nil
}

// PhraseFreq counts a phrase by its entry in df, as DocFreq counts a word.
func (v vocabSource) PhraseFreq(ctx context.Context, phrase string) (int, int, error) {
	return v.DocFreq(ctx, phrase)
}

const faqDoc = `# General FAQ

## Releases

New, stable releases have been coming out roughly every 6 to 18 months since 1991.

The latest stable releases can always be found on the download page of the project.
`

// A passage that lacks a word the question asks about counts that word as missing when the sources use it
// elsewhere as the word of a topic: "stable releases" in a FAQ does not answer "Are sorts stable?" over a corpus
// with a sorting page. A word of the whole corpus (in more passages than the square root of their number), a stray
// one, or a source that cannot tell or fails, leaves the older leniency (a difference of wording).
func TestAnalystCountsAWordTheCorpusUsesAsMissing(t *testing.T) {
	sq := research.SubQuestion{ID: "q1", Question: "Are sorts stable?", Queries: []string{"sorts stable"}}
	d := &sources.Document{URL: "file:///faq.md", Title: "General FAQ", Text: faqDoc, Hash: sources.HashText(faqDoc)}
	analyze := func(src sources.Searcher) []research.Evidence {
		t.Helper()
		var srcs []sources.Searcher
		if src != nil {
			srcs = []sources.Searcher{src}
		}
		roles := New(Config{Searchers: srcs})
		ev, err := roles.Analyst.Analyze(t.Context(), sq, d)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	if ev := analyze(nil); len(ev) == 0 {
		t.Fatal("without a vocabulary the FAQ's sentences are evidence (the leniency this test contrasts with): none")
	}
	if ev := analyze(vocabSource{df: map[string]int{"sort": 40, "stabl": 12}}); len(ev) != 0 {
		t.Errorf("the corpus uses \"sort\" elsewhere, yet the FAQ is evidence: %q", ev[0].Quote)
	}
	if ev := analyze(vocabSource{df: map[string]int{"sort": 1}}); len(ev) == 0 {
		t.Error("a word used once in the corpus (a stray mention) counts as missing")
	}
	if ev := analyze(vocabSource{df: map[string]int{"sort": 500}}); len(ev) == 0 {
		t.Error("a word of the whole corpus (500 of 10,000 passages) counts as missing")
	}
	if ev := analyze(vocabSource{err: errors.New("index closed")}); len(ev) == 0 {
		t.Error("a failing vocabulary changed the reading")
	}
}

// The renderings of a translated word are chosen by the words the sources use: one they never use is dropped, and
// a word none of whose renderings they use keeps its best, so it still searches.
func TestTranslateForUsesTheCorpusVocabulary(t *testing.T) {
	all := translateFor(nil, "集合")
	if !strings.Contains(all, "|") {
		t.Fatalf("集合 has one rendering (%q): the test needs several", all)
	}
	alts := strings.Split(all, "|")
	keep := alts[len(alts)-1]
	v := newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{keep: 5}}})
	if got := translateFor(v, "集合"); got != keep {
		t.Errorf("translateFor = %q, want only the used rendering %q (of %q)", got, keep, all)
	}
	none := newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{}}})
	if got := translateFor(none, "集合"); got != alts[0] {
		t.Errorf("no rendering used: %q, want the best, %q", got, alts[0])
	}
	if got := translateFor(nil, "集合"); got != all {
		t.Errorf("no vocabulary: %q, want every rendering %q", got, all)
	}
}

// A sentence the next one explains is quoted with it: the explanation holds the answer but not the words asked.
func TestAnalystQuotesTheExplainingSentence(t *testing.T) {
	text := "# Sorting\n\n## Sort stability\n\nSorts are guaranteed to be stable. That means that when multiple records have the same key, their original order is preserved.\n\nSorting is done in place by list.sort.\n"
	sq := research.SubQuestion{ID: "q1", Question: "Are sorts stable?", Queries: []string{"sorts stable"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, &sources.Document{URL: "file:///sorting.md", Title: "Sorting", Text: text, Hash: sources.HashText(text)})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ev {
		checkGrounded(t, text, e)
		if strings.HasPrefix(e.Quote, "Sorts are guaranteed to be stable.") {
			found = true
			if !strings.Contains(e.Quote, "their original order is preserved") || !strings.Contains(e.Claim, "original order is preserved") {
				t.Errorf("the explaining sentence is not quoted along: quote %q, claim %q", e.Quote, e.Claim)
			}
		}
	}
	if !found {
		t.Fatalf("the stability sentence is not evidence: %+v", ev)
	}
}

// A table's caption is no finding, also when its words after the label would pass for a sentence and the label is
// quoted with them as their context.
func TestAnalystSkipsACaptionQuotedWithItsLabel(t *testing.T) {
	text := "# JSON Types\n\nThe json type stores an exact copy of the input text of the JSON value.\n\n**Table 8.23. JSON Primitive Types and Corresponding PostgreSQL Types**\n\nstring\ttext\n"
	sq := research.SubQuestion{ID: "q1", Question: "What are the JSON primitive types in PostgreSQL?", Queries: []string{"JSON primitive types PostgreSQL"}}
	ev, err := New(Config{}).Analyst.Analyze(t.Context(), sq, &sources.Document{URL: "file:///json.md", Title: "JSON Types", Text: text, Hash: sources.HashText(text)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ev {
		if strings.Contains(e.Quote, "Table 8.23") {
			t.Errorf("caption quoted: %q", e.Quote)
		}
	}
}

// A word in more than a tenth of the sources' passages is their setting (the product the whole manual is about),
// not a topic; without a source that can tell, no word is.
func TestVocabularySetting(t *testing.T) {
	v := newVocabulary([]sources.Searcher{vocabSource{df: map[string]int{"postgresql": 2700, "jsonb": 52, "index": 1000}}})
	for word, want := range map[string]bool{"postgresql": true, "jsonb": false, "index": false, "absent": false} {
		if got := v.setting(t.Context(), word); got != want {
			t.Errorf("setting(%q) = %v, want %v", word, got, want)
		}
	}
	if newVocabulary(nil).setting(t.Context(), "postgresql") {
		t.Error("with no vocabulary source a word is the setting")
	}
	failing := newVocabulary([]sources.Searcher{vocabSource{err: errors.New("index closed")}})
	if failing.setting(t.Context(), "postgresql") {
		t.Error("a failing source made a word the setting")
	}
}

// A sentence every page of a folder repeats word for word is boilerplate; one a few related pages repeat (a rule
// stated for three functions) is not, nor a short one, nor anything when no source can tell.
func TestBoilerplateSentence(t *testing.T) {
	dir := t.TempDir()
	banner := "The 2018 edition of the book is no longer distributed with the documentation."
	rule := "Zero-length path segments are ignored by every join function."
	for i := range boilerplateUses + 5 {
		text := fmt.Sprintf("# Chapter %d\n\n%s\n\nChapter %d covers topic number %d in depth.\n", i, banner, i, i)
		if i < 3 {
			text += "\n" + rule + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("ch%02d.md", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := newVocabulary([]sources.Searcher{buildIndex(t, dir)})
	ctx := t.Context()
	if !v.boilerplate(ctx, banner) {
		t.Errorf("boilerplate(%q) = false on %d pages", banner, boilerplateUses+5)
	}
	for _, s := range []string{rule, "Chapter 3 covers topic number 3 in depth.", "The book.", ""} {
		if v.boilerplate(ctx, s) {
			t.Errorf("boilerplate(%q) = true", s)
		}
	}
	if newVocabulary(nil).boilerplate(ctx, banner) {
		t.Error("boilerplate with no source = true")
	}
	// The sources' IDF, scaled to [0, 2]: a word of every page weighs less than one of three pages.
	idf := v.idf(ctx)
	every, few := idf("edition"), idf("zero")
	if every >= few || every < 0 || few > 2 {
		t.Errorf("idf(edition) = %.2f, idf(zero) = %.2f; want 0 ≤ the first < the second ≤ 2", every, few)
	}
	if newVocabulary(nil).idf(ctx) != nil {
		t.Error("idf with no source is not nil")
	}
}
