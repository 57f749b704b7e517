package extractive

import (
	"regexp"
	"slices"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
)

// Conflict kinds found by detectConflict.
const (
	conflictNumber   = "number"
	conflictDate     = "date"
	conflictNegation = "negation"
)

var (
	numberRE = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	dateRE   = regexp.MustCompile(`(?i)\b(1[5-9]|20)\d{2}(?:-\d{2}(?:-\d{2})?)?\b|\d{4}\s*年|\d{1,2}\s*月\s*\d{1,2}\s*日|` +
		`\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b`)
	enNegRE = regexp.MustCompile(`(?i)\b(?:not|no|never|cannot|neither|nor|without|none)\b|n't\b`)
	// zhNegFalse are words that contain a negation character but do not negate ("不同" is "different").
	zhNegFalse = []string{"不同", "不仅", "不过", "不断", "无论", "非常", "并非不", "未来"}
	zhNegRE    = regexp.MustCompile(`不|没有|没|无法|无|未|非`)
)

// detectConflict reports whether two statements say different things about the same subject: they share most of
// their content words (Jaccard ≥ 0.5 over the words that are neither numbers nor negations, and at least three in
// common) and then differ in their numbers, their dates, or in one negating what the other affirms. It is a
// deliberately simple detector: it flags candidates for the reader, it does not decide which side is right.
func detectConflict(a, b string) (kind string, ok bool) {
	sa, sb := subjectTerms(a), subjectTerms(b)
	if len(sa) < 3 || len(sb) < 3 {
		return "", false
	}
	inter := 0
	for _, t := range uniq(sa) {
		if slices.Contains(sb, t) {
			inter++
		}
	}
	sim := lexical.Jaccard(sa, sb)
	if inter < 3 || sim < 0.5 {
		return "", false
	}
	da, db := dateSet(a), dateSet(b)
	if len(da) > 0 && len(db) > 0 && differ(da, db) {
		return conflictDate, true
	}
	na, nb := numberSet(a), numberSet(b)
	if len(na) > 0 && len(nb) > 0 && differ(na, nb) {
		return conflictNumber, true
	}
	// A negation flip needs a closer match: two sentences about one subject often differ in other words too.
	if sim >= 0.6 && negated(a) != negated(b) {
		return conflictNegation, true
	}
	return "", false
}

func subjectTerms(s string) []string {
	var out []string
	for _, t := range lexical.Tokenize(s) {
		if numberRE.MatchString(t) && numberRE.FindString(t) == t {
			continue
		}
		if t == "不" || t == "没" || t == "无" || t == "未" || t == "非" {
			continue
		}
		out = append(out, t)
	}
	return uniq(out)
}

func numberSet(s string) []string {
	s = dateRE.ReplaceAllString(s, " ")
	var out []string
	for _, n := range numberRE.FindAllString(s, -1) {
		out = append(out, strings.ReplaceAll(n, ",", ""))
	}
	return uniq(out)
}

func dateSet(s string) []string {
	var out []string
	for _, d := range dateRE.FindAllString(s, -1) {
		out = append(out, strings.ToLower(strings.Join(strings.Fields(d), "")))
	}
	return uniq(out)
}

// differ reports two value sets that are not the same and where neither contains the other (a sentence that
// adds a figure to another's does not contradict it).
func differ(a, b []string) bool {
	sub := func(x, y []string) bool {
		for _, v := range x {
			if !slices.Contains(y, v) {
				return false
			}
		}
		return true
	}
	return !sub(a, b) && !sub(b, a)
}

func negated(s string) bool {
	if enNegRE.MatchString(s) {
		return true
	}
	for _, f := range zhNegFalse {
		s = strings.ReplaceAll(s, f, "")
	}
	return zhNegRE.MatchString(s)
}
