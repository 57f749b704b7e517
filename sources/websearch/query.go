package websearch

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
)

// The search APIs only see the query, so what they are told about the question — its language, whether it asks
// about recent events — is read from the query itself. Each rule here is small and table-tested.

// queryLanguage is the query's main language: "en", "zh", "ja" or "ko".
func queryLanguage(q string) string { return lexical.Language(q) }

// acceptLanguage is the Accept-Language header a browser set to lang would send.
func acceptLanguage(lang string) string {
	switch lang {
	case "zh":
		return "zh-CN,zh;q=0.9,en;q=0.6"
	case "ja":
		return "ja,en;q=0.6"
	case "ko":
		return "ko,en;q=0.6"
	default:
		return "en-US,en;q=0.9"
	}
}

// recency says how recent the events a query asks about are, as the search APIs' time ranges name them ("day",
// "week", "month", "year"), or "" when the query names no period and no recent event.
type recencyRule struct {
	re    *regexp.Regexp
	rangE string
}

var recencyRules = []recencyRule{
	{regexp.MustCompile(`(?i)\b(today|yesterday|tonight|breaking|this morning|past 24 hours|last 24 hours)\b|今天|今日|昨天|昨日|刚刚`), "day"},
	{regexp.MustCompile(`(?i)\b(this|last|past) week\b|本周|这周|上周|最近一周|近一周`), "week"},
	{regexp.MustCompile(`(?i)\b(this|last|past) month\b|\b(latest|recent|recently|news|currently|right now|so far)\b|本月|上个?月|最新|最近|近期|新闻|目前|当前`), "month"},
	{regexp.MustCompile(`(?i)\b(this|last|past) year\b|今年|去年`), "year"},
}

var yearRE = regexp.MustCompile(`\b(19|20)\d{2}\b`)

// recency reads the period from the query; a query naming the current year (or the last one) asks about the
// year's events.
func recency(q string, now time.Time) string {
	for _, r := range recencyRules {
		if r.re.MatchString(q) {
			return r.rangE
		}
	}
	for _, m := range yearRE.FindAllString(q, -1) {
		if y, err := strconv.Atoi(m); err == nil && y >= now.Year()-1 && y <= now.Year() {
			return "year"
		}
	}
	return ""
}

// Brave documents its query limits: at most 400 characters and 50 words.
const (
	braveMaxQueryChars = 400
	braveMaxQueryWords = 50
)

// shortenQuery keeps a query within a word and character limit, cutting whole words from the end (a CJK run with
// no spaces is cut at a character boundary).
func shortenQuery(q string, maxWords, maxChars int) string {
	words := strings.Fields(q)
	if len(words) > maxWords {
		words = words[:maxWords]
	}
	out := strings.Join(words, " ")
	for len(out) > maxChars {
		if i := strings.LastIndexByte(out[:maxChars], ' '); i > 0 {
			out = out[:i]
			continue
		}
		cut := maxChars
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut]
	}
	return out
}

// braveLocale is the country and search_lang Brave takes for a language ("" country: Brave's default).
func braveLocale(lang string) (country, searchLang string) {
	switch lang {
	case "zh":
		return "CN", "zh-hans"
	case "ja":
		return "JP", "jp"
	case "ko":
		return "KR", "ko"
	default:
		return "", "en"
	}
}
