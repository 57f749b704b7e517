// Package bilingual translates search queries between Chinese and English without a model: a Chinese question is
// cut into words by the dictionary's headwords, each word is rendered by the content words of its English senses,
// and an English question is rendered by the headwords whose senses are its words. The dictionary is CC-CEDICT
// (CC BY-SA 4.0, see NOTICE beside this file), embedded compressed: cedict.gz is generated from the dictionary by
// internal/gencedict (go generate), which keeps the headwords and cleaned English senses only, and adds the
// computing renderings of ECDICT (MIT) that CC-CEDICT lacks, read backwards (状态码 "status code", 退出 "exit"):
// those render Chinese into English only (see SupplementMark).
//
// Translation is for retrieval, not for reading: every candidate rendering carries a weight (how much of the
// word's senses it stands for, how specific it is), a word the dictionary lacks keeps its own spelling, and a
// function word (a particle, a classifier) is dropped, so a partly translated question still searches.
package bilingual

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

//go:embed cedict.gz
var cedictGz []byte

// The dictionary format's marks and bounds, which the generator (internal/gencedict) writes by:
const (
	// ComputingMark opens a sense CC-CEDICT labels as one of computing ("(computing) stack").
	ComputingMark = "~"
	// SupplementMark opens a sense from the computing supplement (ECDICT's computing renderings read backwards:
	// 状态码 "status code", 退出 "exit"). Such a sense renders Chinese into English and counts in nothing else — not
	// in the English-to-Chinese index, the sense words, or the statistics of how common a gloss is — so the
	// supplement fills CC-CEDICT's gaps without shifting how its own senses are weighed.
	SupplementMark = "+"
	// MaxWordRunes bounds a headword's length in runes for segmentation (longer headwords are idioms and names
	// that questions rarely contain whole).
	MaxWordRunes = 8
)

// supplementary reports a sense from the computing supplement.
func supplementary(sense string) bool { return strings.HasPrefix(sense, SupplementMark) }

// Dict is a loaded bilingual dictionary. It is immutable and safe for concurrent use.
type Dict struct {
	words map[string]*word // simplified and traditional headwords
	// gloss document frequency: in how many headwords' senses a stemmed English term occurs, for specificity
	df    map[string]int
	total int

	revOnce sync.Once
	rev     map[string][]revEntry // stemmed sense ("memory model") → headwords
	// general is the senses too general to render by the dictionary alone ("light": 光, 轻, 灯 …) → their
	// headwords of two or more characters, for the documents searched to choose from
	general map[string][]revEntry

	sensesOnce sync.Once
	senseSet   map[string]bool // every word of every sense, lower-cased, not stemmed
	bareSet    map[string]bool // every one-word sense written on its own, not after "to" (see Noun)

	stems sync.Map // *word → the content words of each of its senses (senseStems), computed when first asked

	compoundOnce sync.Once
	compound     map[*word]map[string]bool // a grammar word → the renderings its compounds attest (compoundSenses)
}

type word struct {
	text     string // the simplified headword
	senses   []string
	function bool
	grammar  bool // grammaticalWord: grammar in a question, though not marked a function word
	// supplement marks a headword the computing supplement alone has (every sense supplementary)
	supplement bool
}

type revEntry struct {
	zh    string
	score float64
}

// Term is one candidate rendering with its weight in (0, 1].
type Term struct {
	Text   string
	Weight float64
}

var loadDefault = sync.OnceValues(func() (*Dict, error) { return Load(cedictGz) })

// Default returns the embedded CC-CEDICT dictionary, decoded on first use.
func Default() (*Dict, error) { return loadDefault() }

// Load decodes a dictionary in the generator's format: gzip of lines "SIMP\tTRAD\tFLAGS\tSENSE\t…" (TRAD empty
// when equal to SIMP, FLAGS "f" for a function word).
func Load(gz []byte) (*Dict, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("bilingual: dictionary: %w", err)
	}
	d := &Dict{words: map[string]*word{}, df: map[string]int{}}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 || f[0] == "" || !utf8.ValidString(sc.Text()) {
			return nil, fmt.Errorf("bilingual: dictionary line %d: malformed", n)
		}
		simp, trad, flags, senses := f[0], f[1], f[2], f[3:]
		w := d.words[simp]
		if w == nil || w.text != simp {
			w = &word{text: simp}
			d.words[simp] = w
		}
		w.function = w.function || strings.Contains(flags, "f")
		w.senses = append(w.senses, senses...)
		if trad != "" {
			if _, ok := d.words[trad]; !ok {
				d.words[trad] = w
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bilingual: dictionary: %w", err)
	}
	if err := zr.Close(); err != nil {
		return nil, fmt.Errorf("bilingual: dictionary: %w", err)
	}
	if len(d.words) == 0 {
		return nil, fmt.Errorf("bilingual: dictionary is empty")
	}
	seen := map[*word]bool{}
	for _, w := range d.words {
		if seen[w] {
			continue
		}
		seen[w] = true
		w.grammar = grammaticalWord(w.text, w)
		w.supplement = len(w.senses) > 0 && !slices.ContainsFunc(w.senses, func(s string) bool { return !supplementary(s) })
		if w.supplement {
			continue
		}
		d.total++
		terms := map[string]bool{}
		for _, s := range w.senses {
			if supplementary(s) {
				continue
			}
			for _, t := range senseWords(s) {
				terms[t] = true
			}
		}
		for t := range terms {
			d.df[t]++
		}
	}
	return d, nil
}

// Known reports whether s is a headword.
func (d *Dict) Known(s string) bool { _, ok := d.words[s]; return ok }

// decay is the weight of a word's i-th sense: CC-CEDICT lists the main sense first.
func decay(i int) float64 { return 1 / (1 + 0.3*float64(i)) }

// senseWords are the lower-cased words of a sense, affixes ("-ful", "-able") left out.
func senseWords(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '\'' }) {
		if strings.HasPrefix(f, "-") || strings.HasSuffix(f, "-") {
			continue
		}
		// A hyphenated compound ("signal-to-noise") is searched by its parts, as the index splits it.
		for _, p := range strings.Split(f, "-") {
			if p = strings.ToLower(strings.Trim(p, "'")); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// SenseWord reports whether the dictionary writes the English word, as spelled (case aside, not stemmed), in
// some headword's senses: the verb verify is one, its agent noun is not — rendered through its stem, it would take
// the verb's headwords, a guess at the word meant.
func (d *Dict) SenseWord(en string) bool {
	d.loadSenseSets()
	return d.senseSet[strings.ToLower(strings.TrimSpace(en))]
}

// Noun reports whether the dictionary writes the English word on its own as a sense — a thing's name ("command",
// "clause"), where a verb is written after "to" ("to create"): the word can head a noun phrase. Adjectives are
// written alone too; what this rules out is a word the dictionary knows only as an action.
func (d *Dict) Noun(en string) bool {
	d.loadSenseSets()
	return d.bareSet[strings.ToLower(strings.TrimSpace(en))]
}

// loadSenseSets builds senseSet and bareSet from the dictionary's own senses (the supplement's are left out).
func (d *Dict) loadSenseSets() {
	d.sensesOnce.Do(func() {
		d.senseSet, d.bareSet = map[string]bool{}, map[string]bool{}
		for _, w := range d.words {
			for _, s := range w.senses {
				if supplementary(s) {
					continue
				}
				s = strings.TrimPrefix(s, ComputingMark)
				ws := senseWords(s)
				for _, sw := range ws {
					d.senseSet[sw] = true
				}
				if len(ws) == 1 && !strings.Contains(s, " ") {
					d.bareSet[ws[0]] = true
				}
			}
		}
	})
}

// commonness is how many headwords use an English word in their senses: how common it is in the language.
func (d *Dict) commonness(w string) int { return d.df[w] }

// specificity scales a sense word by how few headwords use it in their senses: "thing" or "make" stand for many
// words and say little; a word between the rare and the common keeps most of its weight.
func (d *Dict) specificity(w string) float64 {
	df := d.df[w]
	if df <= 1 || d.total == 0 {
		return 1
	}
	idf := math.Log(float64(d.total) / float64(df))
	return 0.5 + 0.5*math.Min(1, idf/math.Log(float64(d.total)/200))
}
