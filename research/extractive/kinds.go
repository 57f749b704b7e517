package extractive

import (
	"html"
	"regexp"
	"strings"
)

// kind is what a passage does in its document: state a rule, define a term, walk through an example, comment on
// the document itself, or something else. A report answers with rules and definitions; an example's walk-through
// ("The write to a is sequenced before the receive on c …") explains a rule only to a reader who has the example
// in front of them, and meta-commentary ("… is specified more formally in the next section") answers nothing.
type kind int

const (
	kindPlain kind = iota
	kindRule
	kindDefinition
	kindExample
	kindMeta
	kindParameter
)

var kindNames = map[kind]string{kindPlain: "plain", kindRule: "rule", kindDefinition: "definition",
	kindExample: "example", kindMeta: "meta", kindParameter: "parameter"}

func (k kind) String() string { return kindNames[k] }

// weight scales a passage's relevance by its kind. Examples are what the examples facet asks for, so there they
// count in full.
func (k kind) weight(facet string) float64 {
	switch k {
	case kindRule, kindDefinition:
		return 1
	case kindExample:
		if facet == facetExamples {
			return 1
		}
		return 0.72
	case kindMeta:
		return 0.55
	case kindParameter:
		return 0.72
	}
	return 0.9
}

// parameterRE is an item of an API reference's parameter list: a name and its type in braces or angle brackets,
// or a link on them ("`callback` {Function} The function to call …", "`...args` [<any>](…) Optional arguments …",
// "Returns: <Timeout> for use with clearInterval()"). It says what one argument is; what the function does is said in its description,
// which the same section states after the list.
var parameterRE = regexp.MustCompile("^(?:`?(?:\\.\\.\\.)?[A-Za-z_$][\\w$.]*`?|Returns:?)\\s+\\[?[{<][A-Za-z][^{}<>\\n]*(?:<[^<>\\n]*>)?[^{}<>\\n]*[}>]")

// documentNouns are what a text calls itself or its parts ("this tutorial", "the next section").
const documentNouns = `document|section|article|page|chapter|guide|tutorial|howto|post`

// selfRE is a sentence that opens by pointing at the document itself ("This tutorial is intended to be …"): its
// "This" is the page, not what the sentence before it said.
var selfRE = regexp.MustCompile(`^(?i:this|these) (?i:` + documentNouns + `)s?(?:[\s,.;:]|$)`)

// anticipatoryItRE is a sentence whose "It" stands for the clause it announces, not for anything said before it
// (the grammar's anticipatory or extraposed subject: "It is good practice to use …", "It is possible that …"):
// a form of "be" or of a linking verb, then one of the predicates that take such a clause — adjectives of
// necessity, possibility, ease, value and certainty, and "a good idea", "good practice", "an error" — then "to",
// "that" or "for".
var anticipatoryItRE = regexp.MustCompile(`^It(?:'s| is| was| (?:may|might|can|could|would|will|should) be| seems| appears| becomes)` +
	extraposedPredicate + ` (?:to|that|for)\b`)

// askedFrameRE is a question asked through an anticipatory "it" ("Is it a good idea to rely on …?", "Would it be
// safe to call …?"): the predicate judges the clause after it, which is what the question is about.
var askedFrameRE = regexp.MustCompile(`^(?i:is|was|would|will|could|can|should|might|isn't|wasn't|wouldn't) it(?: be)?` +
	extraposedPredicate + ` (?:to|that|for)\b`)

// extraposedPredicate is what stands between an anticipatory "it" with its verb and the clause it announces: an
// adverb or two, an article, and one of the predicates that take such a clause.
const extraposedPredicate = `(?: not)?(?: (?:often|usually|generally|always|sometimes|also|therefore|thus|still|even|very|quite|much|more|most|less|really|rarely|never|particularly|especially))*` +
	` (?:a |an )?(?:good |bad |better |best |common |usual |standard |recommended )?` +
	`(?:possible|impossible|necessary|unnecessary|important|essential|crucial|vital|advisable|inadvisable|easy|easier|hard|harder|difficult|` +
	`simple|simpler|convenient|useful|helpful|safe|safer|unsafe|dangerous|wise|unwise|reasonable|sensible|desirable|preferable|` +
	`sufficient|enough|common|customary|usual|legal|illegal|permissible|valid|invalid|worth|worthwhile|tempting|natural|` +
	`likely|unlikely|clear|obvious|evident|apparent|true|false|certain|guaranteed|recommended|idea|practice|error|mistake)`

// shellNounRE is a sentence that says what something named before it amounts to through an abstract noun
// ("The advantage is that the file is properly closed …", "A consequence is that …", "The default is to …"): the
// thing whose advantage or consequence it is comes in the sentence before.
var shellNounRE = regexp.MustCompile(`^(?:The|A|An|One) [a-z]+ (?:is|was) (?:that|to)\b`)

// anaphoricPhraseRE is a sentence whose subject points back at what stands before it ("The above transaction will
// insert the values 1 and 3", "The preceding example shows …"): without that, the sentence says nothing.
var anaphoricPhraseRE = regexp.MustCompile(`^(?:The|These|This) (?:above|preceding|previous)\b`)

var (
	// References to the document's own structure. Not 下文/上文 alone: 上下文 (context) contains 下文.
	metaRE = regexp.MustCompile(`(?i)\b(this|the (following|next|previous|preceding)|the rest of this|the remainder of this) ` +
		`(` + documentNouns + `)\b|\bas (noted|mentioned|described|discussed|shown|explained) ` +
		`(already|above|earlier|before|below|previously)\b|\b(see|described|explained|discussed|covered) (below|above|later)\b|` +
		`本文|本节|本章|下一节|上一节|如下所述|如上所述|如前所述`)
	// A walk-through of an example names the example …
	exampleRE = regexp.MustCompile("(?i)\\b(this|that|the|above|previous|preceding|following|next|an|another|in (this|the)) " +
		"(program|example|snippet|listing|code)s?\\b|\\bfor (example|instance)\\b|" +
		`例如|比如|示例|上例|下例|这段代码|该程序|此程序|以下代码|上面的代码`)
	// … or its local variables, short names in code spans. One such name can be a rule's placeholder ("once.Do(f)
	// for a particular `f`"); two different ones ("the write to `a` … the receive on `c`") are the example's. A
	// name of two capitals (`FP`, `SB`: registers, acronyms) is a name of the domain, not a variable.
	codeVarRE = regexp.MustCompile("`([A-Za-z][a-z0-9]?)`")
	// Normative wording: obligation, guarantee, prohibition, universality.
	ruleRE = regexp.MustCompile(`(?i)\b(must|shall|should|is guaranteed|are guaranteed|guarantees?|is required|are required|` +
		`never|always|cannot|can ?not|may not|is not allowed|are not allowed|is forbidden|is undefined|is safe|are safe|only if)\b|` +
		`必须|应当|应该|不得|不能|不可|禁止|保证|一定|总是|从不|只有|务必`)
	// An imperative or a generic statement about a kind of thing ("A send on a channel is …", "Each call returns …").
	genericRE = regexp.MustCompile(`^(?:(?:Do not|Don't|Never|Always|Avoid|Prefer|Use|Make sure)\b|(?:A|An|The|Each|Every|All|Any|No) ` +
		`[^,;:]{1,80}?\b(is|are|has|have|does|do|can|will|returns?|happens?|runs?|blocks?)\b)`)
	// "X is defined as", "X means", "X is a/an/the …", "X是指 …", and the first sentence of API documentation:
	// a name and what it does in the present tense ("Is reports whether …", "Copy copies …").
	definitionRE = regexp.MustCompile(`(?i)\b(is|are) (defined|called|known) as\b|\brefers? to\b|\bmeans\b|` +
		"(?-i:^[A-Z][\\w.]*(?:\\(\\))? (?:reports|returns|finds|creates|reads|writes|copies|converts|parses|formats|" +
		"waits|blocks|calls|sets|gets|adds|removes|closes|opens|runs|holds|describes|represents|implements|provides|" +
		"wraps|unwraps|cancels|stops|starts|locks|unlocks|stores|loads|appends|compares|checks|tests|joins|splits|" +
		"matches|panics|signals|records|keeps|makes)\\b)|" +
		`^[A-Z][\w.*` + "`" + `-]*(?: [\w.*` + "`" + `-]+){0,5} (is|are) (a|an|the|one of)\b|是指|定义为|称为|指的是|被称作|是一种|是一个`)
)

// passageKind classifies a passage by its wording. Meta-commentary and example walk-throughs are recognised
// first: "If you must read the rest of this document …" has a "must", but it is about the document.
func passageKind(text string) kind {
	t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(text), "-*>•0123456789. "))
	switch {
	case metaRE.MatchString(withoutAsides(t)):
		return kindMeta
	case parameterRE.MatchString(html.UnescapeString(t)): // "[&lt;Function&gt;](…)" as HTML to Markdown leaves it
		return kindParameter
	case exampleRE.MatchString(t) || codeVars(t) >= 2:
		return kindExample
	case definitionRE.MatchString(t):
		return kindDefinition
	case enumeration(t):
		return kindRule
	case ruleRE.MatchString(t) || genericRE.MatchString(t):
		return kindRule
	}
	return kindPlain
}

// asideRE is a parenthesised aside without nested brackets.
var asideRE = regexp.MustCompile(`\s*[(（][^()（）]*[)）]`)

// withoutAsides is t without its parenthesised asides: a pointer in brackets ("… accessed via unpacking (see later
// in this section) or indexing") leaves the sentence about its subject, not about the document. A text that is
// all aside ("(See the next section.)") is kept whole.
func withoutAsides(t string) string {
	r := asideRE.ReplaceAllString(t, "")
	if len(strings.Fields(r)) < 3 {
		return t
	}
	return r
}

// codeVars counts the distinct short names in code spans.
func codeVars(t string) int {
	seen := map[string]bool{}
	for _, m := range codeVarRE.FindAllStringSubmatch(t, -1) {
		seen[m[1]] = true
	}
	return len(seen)
}

// enumeration reports a sentence ending in a colon quoted with the list it introduces, two items or more ("Those
// superpowers include the ability to:" and its items): it states the parts of what it names, as a rule does,
// whatever its wording.
func enumeration(t string) bool {
	head, rest, ok := strings.Cut(t, "\n")
	for ok && !endsInColon(head) {
		head, rest, ok = strings.Cut(rest, "\n")
	}
	if !ok {
		return false
	}
	items := 0
	for _, l := range strings.Split(rest, "\n") {
		if listItemRE.MatchString(l) {
			items++
		}
	}
	return items >= 2
}
