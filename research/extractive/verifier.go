package extractive

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research"
)

// maxAsks bounds how often one sub-question is sent back to search by this verifier; the graph has its own round
// cap, this one keeps a sub-question the sources cannot cover better from holding the verdict open.
const maxAsks = 2

// maxAskedKeys bounds the verifier's memory of re-searched sub-questions.
const maxAskedKeys = 4096

// sameClaim is the order-aware similarity (lexical.SameClaim) at which two items say the same thing. Word overlap
// alone would merge a section's parallel rules ("a send … before … the receive", "a receive … before … the send").
const sameClaim = 0.6

// maxConflicts keeps a pool full of near-contradictions from burying the report under conflict notes.
const maxConflicts = 8

// Verify implements research.Verifier. It rejects evidence that names no planned sub-question, falls below the
// confidence floor or repeats a stronger item; it flags conflicts between documents (detectConflict); and it
// measures coverage: a sub-question is covered with MinEvidence grounded items drawn from MinSources distinct
// documents. Where it is not, a gap goes back to search with reformulated queries — key-phrase variants and the
// words the evidence found so far uses for the subject. A sub-question already sent back maxAsks times (or once,
// when only source diversity is missing) is accepted as the best the sources offer, so the verdict passes when
// every sub-question is covered or exhausted.
func (v *Verifier) Verify(ctx context.Context, plan *research.Plan, pool []research.Evidence) (*research.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if plan == nil || len(plan.SubQuestions) == 0 {
		return nil, errors.New("extractive verify: no plan")
	}
	sqByID := map[string]research.SubQuestion{}
	for _, sq := range plan.SubQuestions {
		sqByID[sq.ID] = sq
	}
	verdict := &research.Verdict{Rejected: []research.Rejection{}, Gaps: []research.Gap{}, Conflicts: []research.Conflict{}}

	// Strongest first, so a near-duplicate is always the weaker copy.
	items := make([]research.Evidence, 0, len(pool))
	for _, e := range pool {
		if e.Status == "" || e.Status == research.StatusAccepted {
			items = append(items, e)
		}
	}
	// Items of the pages a reader would open first, then those of documents the sources name copies or
	// aggregates of others, so that of two repeats the original's is kept: the copy's citation would be dropped
	// later (answerDocuments) and take the finding with it. Within each, strongest first; ties by source and
	// quote, so the verdict does not depend on the order reads finished in.
	red := map[string]bool{}
	for _, e := range items {
		d := docKey(e.Source)
		if _, ok := red[d]; !ok {
			red[d] = v.vocab.redundant(ctx, d) != ""
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if ra, rb := red[docKey(a.Source)], red[docKey(b.Source)]; ra != rb {
			return rb
		}
		if a.Confidence != b.Confidence {
			return a.Confidence > b.Confidence
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return a.Quote < b.Quote
	})
	kept := map[string][]research.Evidence{}
	var all []research.Evidence
	for _, e := range items {
		reason := ""
		switch {
		case strings.TrimSpace(e.Quote) == "":
			reason = "empty quote"
		case sqByID[e.SubQuestion].ID == "":
			reason = fmt.Sprintf("names sub-question %q, which is not in the plan", e.SubQuestion)
		case e.Confidence < v.cfg.MinConfidence:
			reason = fmt.Sprintf("relevance %.2f is below the floor %.2f", e.Confidence, v.cfg.MinConfidence)
		default:
			var superseded []string
			for _, k := range kept[e.SubQuestion] {
				// A claim that holds another (a sentence claimed once alone and once with the sentence it refers
				// back to) repeats it. Quotes are not compared: a short sentence is quoted with its neighbour for
				// context, and the neighbour's own item is no repeat of it. Two near-identical sentences that differ
				// in a number or a negation are a conflict, not a repeat.
				if _, conflict := detectConflict(k.Claim, e.Claim); conflict {
					continue
				}
				kc, ec := lexical.NormalizeSpace(k.Claim), lexical.NormalizeSpace(e.Claim)
				// The more complete claim stays: "Within a constant declaration, iota represents … . Its value is the
				// index …, starting at zero." over its first sentence alone, however they rank.
				if strings.Contains(ec, kc) && len(ec) > len(kc) {
					superseded = append(superseded, k.ID)
					continue
				}
				if lexical.SameClaim(kc, ec, sameClaim) || strings.Contains(kc, ec) {
					reason = "repeats " + k.ID
					break
				}
			}
			if reason == "" && len(superseded) > 0 {
				for _, id := range superseded {
					verdict.Rejected = append(verdict.Rejected, research.Rejection{EvidenceID: id, Reason: "contained in " + e.ID})
				}
				drop := func(ev []research.Evidence) []research.Evidence {
					return slices.DeleteFunc(ev, func(x research.Evidence) bool { return slices.Contains(superseded, x.ID) })
				}
				kept[e.SubQuestion] = drop(kept[e.SubQuestion])
				all = drop(all)
			}
		}
		if reason != "" {
			verdict.Rejected = append(verdict.Rejected, research.Rejection{EvidenceID: e.ID, Reason: reason})
			continue
		}
		kept[e.SubQuestion] = append(kept[e.SubQuestion], e)
		all = append(all, e)
	}

	verdict.Conflicts = findConflicts(all, plan.Language, func(doc string) bool { return red[doc] })

	var notes []string
	for _, sq := range plan.SubQuestions {
		ev := kept[sq.ID]
		docs := map[string]bool{}
		for _, e := range ev {
			docs[docKey(e.Source)] = true
		}
		key := askKey{plan, sq.ID}
		v.mu.Lock()
		asked := v.asked[key]
		v.mu.Unlock()
		var missing string
		switch {
		case len(ev) < v.cfg.MinEvidence && asked < maxAsks:
			missing = fmt.Sprintf("only %d grounded evidence items, %d needed", len(ev), v.cfg.MinEvidence)
		case len(ev) >= v.cfg.MinEvidence && len(docs) < v.cfg.MinSources && asked < 1:
			missing = fmt.Sprintf("all evidence comes from %d document(s); a second independent source would corroborate it", len(docs))
		}
		state := "covered"
		if missing != "" {
			queries := reformulate(sq, ev, all, v.vocab)
			if len(queries) == 0 {
				state = "not covered, and no new query to try"
			} else {
				verdict.Gaps = append(verdict.Gaps, research.Gap{SubQuestion: sq.ID, Missing: missing, Queries: queries})
				v.mu.Lock()
				if len(v.asked) >= maxAskedKeys {
					// A long-lived engine (a server) must not grow without bound; forgetting old runs costs at most
					// one extra directed re-search.
					clear(v.asked)
				}
				v.asked[key]++
				v.mu.Unlock()
				state = "gap: " + missing
			}
		} else if len(ev) < v.cfg.MinEvidence || len(docs) < v.cfg.MinSources {
			state = "accepted as the best the sources offer after directed re-search"
		}
		notes = append(notes, fmt.Sprintf("%s: %d items from %d documents — %s", sq.ID, len(ev), len(docs), state))
	}
	verdict.Pass = len(verdict.Gaps) == 0
	verdict.Notes = strings.Join(notes, "; ")
	return verdict, nil
}

// docKey identifies a document: a source URL without its line anchor or fragment.
func docKey(source string) string {
	if i := strings.IndexByte(source, '#'); i >= 0 {
		return source[:i]
	}
	return source
}

func findConflicts(all []research.Evidence, lang string, redundant func(doc string) bool) []research.Conflict {
	out := []research.Conflict{}
	for i := 0; i < len(all) && len(out) < maxConflicts; i++ {
		for j := i + 1; j < len(all) && len(out) < maxConflicts; j++ {
			a, b := all[i], all[j]
			if docKey(a.Source) == docKey(b.Source) {
				continue // a conflict is between sources
			}
			if redundant(docKey(a.Source)) || redundant(docKey(b.Source)) {
				continue // a copy or an aggregate repeats another page: it is no independent source to disagree
			}
			kind, ok := detectConflict(a.Claim, b.Claim)
			if !ok {
				continue
			}
			out = append(out, research.Conflict{
				SubQuestion: a.SubQuestion,
				Description: conflictText(kind, a, b, lang),
				EvidenceIDs: []string{a.ID, b.ID},
			})
		}
	}
	return out
}

func conflictText(kind string, a, b research.Evidence, lang string) string {
	an, bn := sourceName(a), sourceName(b)
	if lang == "zh" {
		what := map[string]string{conflictNumber: "数字", conflictDate: "日期", conflictNegation: "肯定与否定"}[kind]
		return fmt.Sprintf("%s 与 %s 对同一主题的说法在%s上不一致", an, bn, what)
	}
	what := map[string]string{conflictNumber: "give different numbers", conflictDate: "give different dates",
		conflictNegation: "disagree: one negates what the other states"}[kind]
	return fmt.Sprintf("%s and %s %s about the same subject", an, bn, what)
}

// sourceName is a short readable name of an evidence item's document: its title or the last path element.
func sourceName(e research.Evidence) string {
	if e.Title != "" {
		return e.Title
	}
	u, err := url.Parse(docKey(e.Source))
	if err != nil || u.Path == "" {
		return docKey(e.Source)
	}
	p := strings.TrimRight(u.Path, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 && i+1 < len(p) {
		p = p[i+1:]
	}
	if u.Host != "" {
		return u.Host + "/" + p
	}
	return p
}

// reformulate proposes new queries for a gapped sub-question: its key phrases on their own, and each combined
// with the words the evidence found so far uses most (the sources' own vocabulary for the subject), never a
// query already tried. A Chinese key phrase is also searched in English, rendered by the sources' vocabulary v.
func reformulate(sq research.SubQuestion, ev, all []research.Evidence, v *vocabulary) []string {
	tried := map[string]bool{}
	for _, q := range sq.Queries {
		tried[strings.ToLower(lexical.NormalizeSpace(q))] = true
	}
	qTerms := map[string]bool{}
	for _, q := range append([]string{sq.Question}, sq.Queries...) {
		for _, t := range lexical.Tokenize(q) {
			qTerms[t] = true
		}
	}
	phrases, _ := splitPhrases(sq.Question)
	var keys []string
	for _, p := range phrases {
		keys = append(keys, p.Text)
	}
	if len(keys) == 0 && len(sq.Queries) > 0 {
		keys = []string{sq.Queries[0]}
	}
	source := ev
	if len(source) == 0 {
		// Nothing for this sub-question yet: borrow the vocabulary of evidence that mentions its key phrases.
		for _, e := range all {
			for _, t := range lexical.Tokenize(e.Claim) {
				if qTerms[t] {
					source = append(source, e)
					break
				}
			}
		}
	}
	vocab := evidenceVocabulary(source, qTerms, 3)

	var out []string
	add := func(q string) {
		q = lexical.NormalizeSpace(q)
		k := strings.ToLower(q)
		if q == "" || tried[k] {
			return
		}
		tried[k] = true
		out = append(out, q)
	}
	main := strings.Join(keys, " ")
	for _, w := range vocab {
		add(main + " " + w)
	}
	for _, k := range keys {
		add(k)
		if t := translateFor(v, k); t != "" {
			add(t)
		}
		for _, v := range phraseVariants(k) {
			add(v)
		}
	}
	if len(out) > 4 {
		out = out[:4]
	}
	return out
}

// phraseVariants are other spellings of a key phrase a source may use: without its leading modifier ("Go memory
// model" → "memory model") and with the head word's number switched ("channel" ↔ "channels").
func phraseVariants(p string) []string {
	words := strings.Fields(p)
	if len(words) == 0 || hasCJK(p) {
		return nil
	}
	var out []string
	if len(words) >= 2 {
		out = append(out, strings.Join(words[1:], " "))
	}
	last := words[len(words)-1]
	switch {
	case strings.HasSuffix(last, "ies") && len(last) > 4:
		last = strings.TrimSuffix(last, "ies") + "y"
	case strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "ss") && len(last) > 3:
		last = strings.TrimSuffix(last, "s")
	case strings.HasSuffix(last, "y") && len(last) > 3:
		last = strings.TrimSuffix(last, "y") + "ies"
	default:
		last += "s"
	}
	return append(out, strings.Join(append(append([]string(nil), words[:len(words)-1]...), last), " "))
}

// evidenceVocabulary returns the n words the evidence uses most that the queries do not already contain: surface
// forms of Latin words (4+ letters, not stop words) and CJK bigrams.
func evidenceVocabulary(ev []research.Evidence, exclude map[string]bool, n int) []string {
	count := map[string]int{}
	first := map[string]int{}
	pos := 0
	for _, e := range ev {
		for _, w := range wordRE.FindAllString(e.Claim, -1) {
			pos++
			if hasCJK(w) {
				rs := []rune(w)
				for i := 0; i+2 <= len(rs); i++ {
					pos++ // each bigram its own place: ties between bigrams of one word are otherwise map order
					bg := string(rs[i : i+2])
					if !exclude[bg] && len(lexical.Tokenize(bg)) > 0 {
						count[bg]++
						if _, ok := first[bg]; !ok {
							first[bg] = pos
						}
					}
				}
				continue
			}
			lw := strings.ToLower(w)
			toks := lexical.Tokenize(lw)
			if utf8.RuneCountInString(lw) < 4 || len(toks) != 1 || exclude[toks[0]] || enSeparators[lw] {
				continue
			}
			count[lw]++
			if _, ok := first[lw]; !ok {
				first[lw] = pos
			}
		}
	}
	words := make([]string, 0, len(count))
	for w, c := range count {
		if c >= 2 || len(ev) < 3 {
			words = append(words, w)
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if count[words[i]] != count[words[j]] {
			return count[words[i]] > count[words[j]]
		}
		if first[words[i]] != first[words[j]] {
			return first[words[i]] < first[words[j]]
		}
		return words[i] < words[j]
	})
	if len(words) > n {
		words = words[:n]
	}
	return words
}
