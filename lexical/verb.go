package lexical

import (
	"regexp"
	"strings"
)

var (
	latinWordRE = regexp.MustCompile(`[A-Za-z][A-Za-z'-]*`)
	auxiliaryRE = regexp.MustCompile(`(?i)^(is|are|was|were|be|been|being|has|have|had|do|does|did|can|could|may|might|must|shall|should|will|would|need|needs)$`)
	articleRE   = regexp.MustCompile(`(?i)^(the|a|an)$`)
	// imperativeRE: verbs that open an instruction in documentation and code comments.
	imperativeRE = regexp.MustCompile(`^(Add|Avoid|Call|Check|Close|Drop|Ensure|Exit|Keep|Make|Move|Open|Pass|Put|Read|Remove|Return|Run|See|Set|Skip|Start|Stop|Take|Try|Use|Wait|Write)$`)
	// clauseOpenRE is the first word of a clause after a comma, semicolon or colon.
	clauseOpenRE = regexp.MustCompile(`[,;:]\s+([A-Za-z]+)\b`)
	// beforeArticleRE is a word directly before an article, nothing but a space between them.
	beforeArticleRE = regexp.MustCompile(`(?i)\b([A-Za-z]+) (?:the|a|an)\b`)
	// functionWordRE: words that stand before an article without being verbs.
	functionWordRE = regexp.MustCompile(`(?i)^(of|to|in|on|at|by|for|with|from|into|onto|over|under|about|through|between|among|across|via|within|without|during|after|before|per|than|as|and|or|but|nor|if|when|while|that|which|who|where|so|because|since|until|unless|whether|all|both|each|every|such|not|only|just|even|also|like|than|is|are|was|were)$`)
)

// Auxiliary reports an auxiliary or modal verb ("is", "can", "would"), in any case.
func Auxiliary(w string) bool { return auxiliaryRE.MatchString(w) }

// HasVerb reports whether s reads as a sentence with a verb rather than a label or a noun phrase, without a
// part-of-speech model: a Chinese text of four characters or more; a remark on a name in code
// ("`children …`: set to nil by …"); an English text of three words or more that opens with an instruction's verb,
// has a bare word taking an article as its object ("use the true R name"), or holds an auxiliary or modal verb
// or a word inflected as a verb (-s, -ed). Headings, captions of three words, "Its kind and location." and
// "Rust logo Rust 1.63.0" have none.
func HasVerb(s string) bool {
	cjk := 0
	for _, r := range s {
		if IsCJK(r) {
			cjk++
		}
	}
	if cjk >= 4 {
		return true
	}
	// A remark on a declaration ("`children map[canceler]struct{}`: set to nil by the first cancel call") names
	// its subject in code and says what it is: a definition, not a sentence missing its verb.
	if strings.HasPrefix(s, "`") {
		if i := strings.Index(s[1:], "`: "); i >= 0 && len(latinWordRE.FindAllString(s[i+4:], -1)) >= 3 {
			return true
		}
	}
	words := latinWordRE.FindAllString(s, -1)
	if len(words) < 3 {
		return false
	}
	// An instruction opens with its verb: "Move primary cache to victim cache.", "See package sync documentation."
	if imperativeRE.MatchString(words[0]) {
		return true
	}
	// … or a clause does: "For the hardware register, use R13."
	for _, m := range clauseOpenRE.FindAllStringSubmatch(s, -1) {
		if imperativeRE.MatchString(strings.ToUpper(m[1][:1]) + m[1][1:]) {
			return true
		}
	}
	// An imperative's verb is a bare word taking its object: "use the true R name", "Give an error if …".
	for _, m := range beforeArticleRE.FindAllStringSubmatch(s, -1) {
		if !functionWordRE.MatchString(m[1]) && !articleRE.MatchString(m[1]) {
			return true
		}
	}
	for _, w := range words {
		lw := strings.ToLower(w)
		if auxiliaryRE.MatchString(w) || len(lw) >= 4 && (strings.HasSuffix(lw, "ed") ||
			strings.HasSuffix(lw, "s") && !strings.HasSuffix(lw, "ss") && !strings.HasSuffix(lw, "us") && !strings.HasSuffix(lw, "is")) {
			return true
		}
	}
	return false
}

// WithoutAsides is s without its parenthetical asides — a parenthesis after a space, "(as above, but with the
// statements swapped)" — whose verbs are not the sentence's: HasVerb(WithoutAsides("This program (as above, but
// …)")) is false, a program named and nothing said of it. A call's parentheses ("f(x)") stay, and a sentence
// wholly in parentheses is read inside them.
func WithoutAsides(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "(") && (strings.HasSuffix(t, ")") || strings.HasSuffix(t, ").")) {
		t = strings.TrimSuffix(strings.TrimSuffix(t, "."), ")")[1:]
	}
	for {
		u := asideRE.ReplaceAllString(t, "$1")
		if u == t {
			return u
		}
		t = u
	}
}

// asideRE is a parenthesis opened after white space or at the start, holding no other parenthesis.
var asideRE = regexp.MustCompile(`(^|\s)\([^()]*\)`)

// captionRE is the label of a listing, figure, table or example: "Listing 4-5: …", "Figure 3.", "Table 9.1 …".
var captionRE = regexp.MustCompile(`^(?:Listing|Figure|Fig\.|Table|Example|Exhibit)\s+[0-9A-Z]+(?:[-.][0-9]+)*\s*[:.—–-]`)

// IsCaption reports the caption of a listing, figure, table or example ("Listing 4-5: Returning ownership of
// parameters", "Figure 3. …", "Table 9.1 …"): a label of what stands beside it, not a statement on its own.
// Leading emphasis and list or quote markers are ignored.
func IsCaption(s string) bool {
	return captionRE.MatchString(strings.TrimLeft(strings.TrimSpace(s), "*_`> -"))
}

// verbLikeRE is what stands before "like" used as a verb: a subject pronoun, an auxiliary or modal, or "to".
var verbLikeRE = regexp.MustCompile(`(?i)^(i|you|we|they|he|she|it|who|to|do|does|did|would|should|could|might|may|will|can|don't|doesn't|didn't)$`)

// Preposition reports w, the word after prev, as the preposition "like" or "unlike" ("inheritance like
// object-oriented languages", "numbers like 0.1"), not the verb ("you like", "would like to"): English writes the
// verb after its subject or an auxiliary, the preposition after a noun or an adjective. Punctuation around either
// word is ignored.
func Preposition(prev, w string) bool {
	switch strings.ToLower(TrimWord(w)) {
	case "unlike":
		return true
	case "like":
		return !verbLikeRE.MatchString(TrimWord(prev))
	}
	return false
}
