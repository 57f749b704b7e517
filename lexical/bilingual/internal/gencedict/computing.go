package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/lexical/bilingual"
)

// The computing senses come from ECDICT (an English–Chinese dictionary, MIT licence), whose translations label a
// line of computing renderings "[计]" ("status code" → "[计] 状态码"). Read backwards, those lines give the English
// of Chinese computing terms CC-CEDICT lacks (状态码, 全局变量) or renders only in their everyday senses (退出 is
// "to withdraw; to quit" there, "exit" in a program's documentation).

// computingLabel opens ECDICT's line of computing renderings within a translation.
const computingLabel = "[计]"

// maxComputingSenses bounds how many English terms one Chinese rendering keeps: ECDICT reads some (数据, 程序)
// back to dozens of headwords, most of them rare compounds.
const maxComputingSenses = 3

// maxComputingWords bounds an English term's words: longer headwords are descriptions, not terms.
const maxComputingWords = 3

var (
	// englishTermRE is an English term as documentation writes it in running text: lower-case words, hyphens
	// inside. Capitals mark acronyms and names ("FUNC", "ATP"), which a reader's question seldom means.
	englishTermRE = regexp.MustCompile(`^[a-z]+(?:[ -][a-z]+)*$`)
	// remarkRE is a parenthesised remark inside a Chinese rendering ("（计算机）").
	remarkRE = regexp.MustCompile(`（[^（）]*）|\([^()]*\)`)
)

// computingSense is one Chinese rendering read back to its English terms, best first.
type computingSense struct {
	zh string
	en []string
}

// parseComputing reads ECDICT's CSV (header word,phonetic,definition,translation,…,frq,…) and returns each
// Chinese rendering of a computing line with the English headwords that have it, in the order of their first
// appearance. A headword's rank is its frequency rank where ECDICT gives one (frq, else bnc; lower is more common),
// so "function" comes before a rarer headword with the same rendering; then fewer words.
func parseComputing(r io.Reader) ([]computingSense, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	wordCol, okW := col["word"]
	trCol, okT := col["translation"]
	if !okW || !okT {
		return nil, errors.New("header: no word and translation columns")
	}
	rank := func(rec []string, name string) int {
		if i, ok := col[name]; ok && i < len(rec) {
			if n, err := strconv.Atoi(strings.TrimSpace(rec[i])); err == nil && n > 0 {
				return n
			}
		}
		return 0
	}
	type cand struct {
		en   string
		rank int
	}
	byZh := map[string][]cand{}
	var order []string
	rows := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		rows++
		if wordCol >= len(rec) || trCol >= len(rec) {
			continue
		}
		en := strings.TrimSpace(rec[wordCol])
		if !englishTermRE.MatchString(en) || len(strings.Fields(en)) > maxComputingWords {
			continue
		}
		rk := rank(rec, "frq")
		if rk == 0 {
			rk = rank(rec, "bnc")
		}
		// ECDICT writes the line breaks of a translation as the two characters "\n".
		for _, line := range strings.Split(strings.ReplaceAll(rec[trCol], `\n`, "\n"), "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, computingLabel) {
				continue
			}
			for _, zh := range strings.FieldsFunc(line[len(computingLabel):], func(r rune) bool {
				return strings.ContainsRune(",，;；、/", r)
			}) {
				zh = strings.TrimSpace(remarkRE.ReplaceAllString(zh, ""))
				if !computingRendering(zh) {
					continue
				}
				if _, seen := byZh[zh]; !seen {
					order = append(order, zh)
				}
				if !slices.ContainsFunc(byZh[zh], func(c cand) bool { return c.en == en }) {
					byZh[zh] = append(byZh[zh], cand{en, rk})
				}
			}
		}
	}
	if rows == 0 {
		return nil, errors.New("no rows")
	}
	out := make([]computingSense, 0, len(order))
	for _, zh := range order {
		cs := byZh[zh]
		slices.SortStableFunc(cs, func(a, b cand) int {
			ra, rb := a.rank, b.rank
			if ra == 0 {
				ra = 1 << 30
			}
			if rb == 0 {
				rb = 1 << 30
			}
			if ra != rb {
				return ra - rb
			}
			return len(strings.Fields(a.en)) - len(strings.Fields(b.en))
		})
		s := computingSense{zh: zh}
		for _, c := range cs[:min(len(cs), maxComputingSenses)] {
			s.en = append(s.en, c.en)
		}
		out = append(out, s)
	}
	return out, nil
}

// computingRendering reports whether a Chinese rendering can stand as a headword: two to bilingual.MaxWordRunes Han
// characters (a single character is too ambiguous to read back), not an adjective or adverb made with 的 or 地.
func computingRendering(zh string) bool {
	n := utf8.RuneCountInString(zh)
	if n < 2 || n > bilingual.MaxWordRunes {
		return false
	}
	for _, r := range zh {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
	}
	return !strings.HasSuffix(zh, "的") && !strings.HasSuffix(zh, "地")
}

// uncomposed keeps, of each computing rendering, the English terms CC-CEDICT (d) does not already give it: a
// term is given when every word of it is among the renderings of the rendering's words as CC-CEDICT cuts it. 默认值
// is 默认 "default" + 值 "value" there, which says "default value" as well as ECDICT's "default" does and keeps
// "value" besides, so 默认值 stays two words; 状态码 is 状态 "condition, state" + 码 "code", which never says
// "status", so ECDICT's "status code" makes it a headword. Of a headword CC-CEDICT has, the terms its own senses
// already say ("execution" of 执行 "to execute") are left out and the others ("exit" of 退出 "to withdraw, to
// quit") added after its own.
func uncomposed(d *bilingual.Dict, computing []computingSense) []computingSense {
	var out []computingSense
	for _, cs := range computing {
		parts := map[string]bool{}
		for _, seg := range d.Segment(cs.zh) {
			ts, _ := d.English(seg.Text)
			for _, t := range ts {
				for _, st := range lexical.Tokenize(t.Text) {
					parts[st] = true
				}
			}
		}
		kept := computingSense{zh: cs.zh}
		for _, en := range cs.en {
			// A term with a word no part renders says more than CC-CEDICT's cut of the rendering does.
			if t := lexical.Tokenize(en); len(t) == 0 || slices.ContainsFunc(t, func(st string) bool { return !parts[st] }) {
				kept.en = append(kept.en, en)
			}
		}
		if len(kept.en) > 0 {
			out = append(out, kept)
		}
	}
	return out
}
