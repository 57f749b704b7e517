// Package synonyms is an English thesaurus without a model: for a word, the other words of its WordNet synsets
// ("terminate" and "finish" for "end", "exterior" for "outside"), each with the sense number WordNet gives the
// synset for the word, so that a caller can keep to the common senses. The data is WordNet 3.1 (Princeton's
// BSD-style licence, see NOTICE beside this file), embedded compressed: wordnet.gz is generated from the WordNet
// database files by internal/genwordnet (go generate).
//
// A match through a synonym is weaker evidence than the word itself: callers weigh it as a fraction of an exact
// match.
package synonyms

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed wordnet.gz
var wordnetGz []byte

// Limits on the table's text, checked by the parser: a line of WordNet's (the longest lemma lists its ~100
// synsets) is well under maxLine, a sense number under maxRank.
const (
	maxLine = 256 << 10
	maxRank = 1000
)

// Sense is one synset of a word: its sense number for the word (1 = most frequent) and its other words.
type Sense struct {
	Rank  int
	Words []string
}

// Thesaurus is a table of synonyms, decoded on first use. Its methods are safe for concurrent use.
type Thesaurus struct {
	gz    []byte
	once  sync.Once
	words map[string][]Sense
	err   error
}

// New returns a thesaurus over a table in the generator's format (gzip of lines
// "LEMMA\tRANK:WORD|WORD\tRANK:WORD…"), decoded when it is first asked.
func New(gz []byte) *Thesaurus { return &Thesaurus{gz: gz} }

var embedded = sync.OnceValue(func() *Thesaurus { return New(wordnetGz) })

// Embedded returns the thesaurus over the embedded WordNet table, as bilingual.Default does the dictionary: one
// value for the process, read-only once decoded on its first use (about 100 ms), so every engine shares it.
func Embedded() *Thesaurus { return embedded() }

func (t *Thesaurus) load() error {
	t.once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(t.gz))
		if err != nil {
			t.err = fmt.Errorf("synonyms: table: %w", err)
			return
		}
		t.words, t.err = parse(zr)
		if t.err == nil {
			if err := zr.Close(); err != nil {
				t.err = fmt.Errorf("synonyms: table: %w", err)
			}
		}
		if t.err != nil {
			t.words = nil
		}
	})
	return t.err
}

// Len is the number of words the thesaurus knows.
func (t *Thesaurus) Len() (int, error) {
	if err := t.load(); err != nil {
		return 0, err
	}
	return len(t.words), nil
}

// Senses returns the synsets of word (lower-cased before the look-up), most frequent sense first within each part
// of speech; nil when the word has none with another word. An inflected word the table lacks ("ends", "ended",
// "ending") is looked up by its base forms, found by WordNet's own detachment rules (morphy): the senses of every
// base form the table has. The slices are shared: do not modify them.
func (t *Thesaurus) Senses(word string) ([]Sense, error) {
	if err := t.load(); err != nil {
		return nil, err
	}
	word = strings.ToLower(strings.TrimSpace(word))
	if s, ok := t.words[word]; ok {
		return s, nil
	}
	var out []Sense
	seen := map[string]bool{}
	for _, r := range detachments {
		if base, ok := strings.CutSuffix(word, r[0]); ok && base != "" && !seen[base+r[1]] {
			seen[base+r[1]] = true
			out = append(out, t.words[base+r[1]]...)
		}
	}
	return out, nil
}

// detachments are WordNet's morphy rules for nouns, verbs and adjectives: an ending and what replaces it.
var detachments = [][2]string{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"},
	{"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}, {"er", ""}, {"est", ""}, {"er", "e"},
	{"est", "e"},
}

// Related returns the distinct synonyms of word from its senses numbered at most maxRank (0: all), in the order of
// its senses.
func (t *Thesaurus) Related(word string, maxRank int) ([]string, error) {
	senses, err := t.Senses(word)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range senses {
		if maxRank > 0 && s.Rank > maxRank {
			continue
		}
		for _, w := range s.Words {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// parse reads the table's text. Every malformed line is an error naming it: the table is generated, so a bad line
// means a damaged file, and a thesaurus that silently lost words would rank differently without saying why.
func parse(r io.Reader) (map[string][]Sense, error) {
	out := map[string][]Sense{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("synonyms: table line %d: not UTF-8", n)
		}
		f := strings.Split(line, "\t")
		word := f[0]
		if word == "" || strings.TrimSpace(word) != word || strings.ToLower(word) != word || len(f) < 2 {
			return nil, fmt.Errorf("synonyms: table line %d: malformed", n)
		}
		if _, dup := out[word]; dup {
			return nil, fmt.Errorf("synonyms: table line %d: %q listed twice", n, word)
		}
		senses := make([]Sense, 0, len(f)-1)
		for _, g := range f[1:] {
			rank, words, ok := strings.Cut(g, ":")
			r, err := strconv.Atoi(rank)
			if !ok || err != nil || r < 1 || r > maxRank || rank != strconv.Itoa(r) || words == "" {
				return nil, fmt.Errorf("synonyms: table line %d: malformed sense %q", n, g)
			}
			ws := strings.Split(words, "|")
			for _, w := range ws {
				if w == "" || w == word {
					return nil, fmt.Errorf("synonyms: table line %d: malformed sense %q", n, g)
				}
			}
			senses = append(senses, Sense{Rank: r, Words: ws})
		}
		out[word] = senses
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("synonyms: table: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("synonyms: table is empty")
	}
	return out, nil
}
