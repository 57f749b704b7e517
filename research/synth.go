package research

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// ---- ⑤ synthesize, integrity check, render ----

func (r *runner) synthesize(ctx context.Context, verdict *Verdict) (*Report, error) {
	start, t0, c0 := r.stageStart(StageSynth, r.currentRound())
	sctx, cancel := r.stageCtx(ctx, StageSynth)
	defer cancel()
	all, err := r.pool(ctx, "")
	if err != nil {
		return nil, err
	}
	byID := map[string]Evidence{}
	var accepted []Evidence
	for _, e := range all {
		byID[e.ID] = e
		if e.Status == StatusAccepted {
			accepted = append(accepted, e)
		}
	}
	docs := r.storedDocuments(ctx)
	check := evidenceCheck(byID, docs)
	r.mu.Lock()
	plan := r.plan
	r.mu.Unlock()
	in := SynthesisInput{Plan: plan, Evidence: accepted, Verdict: verdict, CutShort: r.cutShortText()}
	checker := Checker{Evidence: check, Question: plan.Question, Judged: map[string]string{},
		Quote: func(id string) (string, string, bool) {
			e, ok := byID[id]
			return e.Quote, e.Title, ok
		}}.withMemo()
	judged := map[string]bool{}
	var draft string
	var synthErr error
	attempts, refused := 0, 0
	for attempt := 0; attempt <= max(r.rc.Budget.SynthRetries, 0); attempt++ {
		var got *Draft
		err := r.roleCall(sctx, StageSynth, r.currentRound(), "", fmt.Sprintf("synthesize (attempt %d)", attempt+1), nil,
			func(ctx context.Context) error {
				d, err := r.cfg.Roles.Synthesizer.Synthesize(ctx, in)
				if err == nil && d == nil {
					err = errors.New("synthesizer returned no draft")
				}
				got = d
				return err
			})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			synthErr = err
			break // keep the previous draft, if any; its problems are removed below
		}
		attempts++
		draft = got.Markdown
		r.judgeSupport(sctx, plan, checker, judged, draft)
		problems := checker.Check(draft)
		if len(problems) == 0 {
			r.logf(ctx, StageSynth, r.currentRound(), "", "integrity", fmt.Sprintf("draft %d passes", attempt+1), nil)
			break
		}
		refused++
		in.Problems = make([]string, len(problems))
		for i, p := range problems {
			in.Problems[i] = p.String()
		}
		r.logf(ctx, StageSynth, r.currentRound(), "", "integrity",
			fmt.Sprintf("draft %d: %d problems:\n%s", attempt+1, len(problems), strings.Join(in.Problems, "\n")), nil,
			func(e *state.LogEntry) { e.Retries = attempt })
		r.emit(Event{Stage: StageSynth, Kind: EventIntegrity, Count: len(problems),
			Message: fmt.Sprintf("draft %d refused in %d places", attempt+1, len(problems))})
	}
	partial := false
	if draft == "" {
		// Synthesis failed for good: publish the grounded evidence itself, clearly marked, rather than nothing.
		partial = true
		draft = fallbackDraft(plan, accepted)
		r.logf(ctx, StageSynth, r.currentRound(), "", "partial report", "synthesis failed; the report lists the grounded evidence", synthErr)
	}
	body, removed := checker.Remove(draft)
	for _, s := range removed {
		r.logf(ctx, StageSynth, r.currentRound(), "", "removed", s, nil)
	}
	r.mu.Lock()
	r.synthN = attempts
	r.mu.Unlock()

	rep := r.render(ctx, plan, body, removed, all, docs, synthOutcome{partial: partial, refused: refused})
	rep.Stats.SynthAttempts = attempts
	if err := r.publish(ctx, rep); err != nil {
		return nil, err
	}
	r.stageDone(ctx, StageSynth, r.currentRound(), start, t0, c0,
		fmt.Sprintf("%d citations, %d sentences removed", len(rep.Citations), len(removed)))
	r.emit(Event{Stage: StageSynth, Kind: EventReportReady, Message: filepath.Join(r.dir, ReportMarkdownFile), Count: len(rep.Citations)})
	return rep, nil
}

// storedDocuments returns storedDocument remembered by source for one synthesis: the integrity check and the
// renderer look every cited source up once per citation of it, and what the run stored does not change while
// it synthesises. The documents' records are read once, in one query, on the first lookup. A lookup its
// context ended is not remembered.
func (r *runner) storedDocuments(ctx context.Context) func(source string) (*docEntry, error) {
	type found struct {
		d   *docEntry
		err error
	}
	var (
		mu     sync.Mutex
		memo   = map[string]found{}
		listed bool
		docs   []state.Document
		byNorm map[string]*state.Document
	)
	return func(source string) (*docEntry, error) {
		mu.Lock()
		defer mu.Unlock()
		if f, ok := memo[source]; ok {
			return f.d, f.err
		}
		if !listed {
			listed = true
			if all, err := r.db.Documents(ctx); err == nil {
				docs, byNorm = all, make(map[string]*state.Document, len(all))
				for i := range docs {
					if n := sources.NormalizeURL(docs[i].URL); byNorm[n] == nil {
						byNorm[n] = &docs[i]
					}
				}
			}
		}
		var d *docEntry
		var err error
		if byNorm == nil {
			d, err = r.storedDocument(ctx, source) // the list failed: one lookup per source
		} else if meta := byNorm[sources.NormalizeURL(source)]; meta != nil {
			d, err = r.storedEntry(ctx, meta)
		} else if meta := pickDocument(docs, source); meta != nil {
			d, err = r.storedEntry(ctx, meta)
		} else {
			err = fmt.Errorf("state: document %s: %w", source, state.ErrNotFound)
		}
		if ctx.Err() == nil {
			memo[source] = found{d, err}
		}
		return d, err
	}
}

// evidenceCheck is the integrity rule for one citation: the evidence exists, is accepted, and its quote is
// found verbatim in the stored text of its source. The verdict on each id is kept: a draft cites an item many
// times, and the pool does not change while the run synthesises.
func evidenceCheck(byID map[string]Evidence, docs func(source string) (*docEntry, error)) EvidenceCheck {
	var mu sync.Mutex
	memo := map[string]error{}
	return func(id string) error {
		mu.Lock()
		err, ok := memo[id]
		mu.Unlock()
		if ok {
			return err
		}
		err = checkEvidence(byID, docs, id)
		mu.Lock()
		memo[id] = err
		mu.Unlock()
		return err
	}
}

func checkEvidence(byID map[string]Evidence, docs func(source string) (*docEntry, error), id string) error {
	e, ok := byID[id]
	if !ok {
		return errors.New("no such evidence in the pool")
	}
	if e.Status != StatusAccepted {
		return fmt.Errorf("the verifier rejected it (%s)", e.Reason)
	}
	d, err := docs(e.Source)
	if err != nil {
		return fmt.Errorf("the text of its source is not available: %v", err)
	}
	if !groundedIn(d.norm, e.Quote) {
		return errors.New("its quote is not found in the source text")
	}
	// A quote cited by lines must stand on exactly those lines of the text that was read.
	if first, last, ok := lineAnchor(e.Source); ok && d.idx != nil {
		a, b, found := d.idx.quoteLines(d.doc.Text, e.Quote)
		if !found || !quoteInLines(d.doc.Text, e.Source, e.Quote) || last-first > b-a {
			return fmt.Errorf("its quote is not on the lines %s cites (it stands on lines %d-%d)", e.Source, a, b)
		}
	}
	return nil
}

// i18n holds the few fixed strings of a rendered report.
type i18n struct {
	engine, extractive, cutShort, sources, citations, citedAs, removed, empty, partial string
	howMade, textRead                                                                  string
	// uncovered opens the list of sub-questions a report that could support nothing leaves open.
	uncovered string
	// readNoModel is howLines[0] for the extractive engine: it makes no model calls and spends no tokens, and the
	// number of passes it made depends on when early stops landed, so it is not shown.
	readNoModel string
	howLines    [7]string
}

var texts = map[string]i18n{
	"en": {
		engine:      "Engine",
		extractive:  "extractive mode — no language model",
		cutShort:    "Cut short: %s. This report is based on the evidence gathered before the cut.",
		sources:     "Sources",
		citations:   "Cited evidence",
		citedAs:     "cited as",
		removed:     "%d statement(s) of the draft were removed because no grounded evidence supports them.",
		empty:       "No statement could be supported by grounded evidence.",
		uncovered:   "The sources searched answer none of these sub-questions:",
		partial:     "Partial report: the synthesis failed, so this report lists the grounded evidence the run gathered, unedited.",
		howMade:     "How this report was made",
		textRead:    "text read, lines",
		readNoModel: "%d sources read for %d sub-questions in %d round(s); %d quotes grounded in their sources; no language model",
		howLines: [7]string{
			"%d sources read for %d sub-questions in %d round(s); %d quotes grounded in their sources; %d model calls, %s tokens",
			"model calls that failed after retries: %d",
			"sources that could not be read: %d",
			"quotes dropped because they are not in their source: %d",
			"sentences removed for lack of support: %d",
			"drafts refused by the integrity check: %d",
			"fuses tripped: %d",
		},
	},
	"zh": {
		engine:      "引擎",
		extractive:  "抽取式模式（extractive mode — no language model）",
		cutShort:    "提前结束：%s。本报告基于结束前收集到的证据。",
		sources:     "来源",
		citations:   "引用的证据",
		citedAs:     "引用编号",
		removed:     "草稿中有 %d 条陈述因没有可溯源的证据支持而被删除。",
		empty:       "没有任何陈述能得到可溯源证据的支持。",
		uncovered:   "所检索的来源没有回答以下任何子问题：",
		partial:     "不完整的报告：综合撰写失败，本报告仅列出本次运行收集到的可溯源证据，未经整理。",
		howMade:     "本报告的生成方式",
		textRead:    "所读文本，行",
		readNoModel: "为 %[2]d 个子问题阅读了 %[1]d 个来源，共 %[3]d 轮；%[4]d 条引文可在来源中逐字找到；未使用语言模型",
		howLines: [7]string{
			"为 %[2]d 个子问题阅读了 %[1]d 个来源，共 %[3]d 轮；%[4]d 条引文可在来源中逐字找到；模型调用 %[5]d 次，%[6]s 个 token",
			"重试后仍失败的模型调用：%d",
			"无法读取的来源：%d",
			"因不在来源中而被丢弃的引文：%d",
			"因缺乏证据支持而删除的句子：%d",
			"被完整性检查退回的草稿：%d",
			"触发的熔断：%d",
		},
	},
}

func textsFor(lang string) i18n {
	if t, ok := texts[lang]; ok {
		return t
	}
	return texts["en"]
}

// render turns the checked draft into the published report: numbered citations in order of first use, the
// engine header, the cut-short note, the citation map and the sources list.
// synthOutcome is what the synthesis loop reports to the renderer.
type synthOutcome struct {
	partial bool // the synthesis failed; the body lists the grounded evidence
	refused int  // drafts the integrity check refused
}

func (r *runner) render(ctx context.Context, plan *Plan, body string, removed []string, all []Evidence,
	docs func(source string) (*docEntry, error), out synthOutcome) *Report {
	lang := plan.Language
	tx := textsFor(lang)
	byID := map[string]Evidence{}
	for _, e := range all {
		byID[e.ID] = e
	}
	// The citation map, sentence by sentence, from the evidence-id form.
	var conclusions []Conclusion
	walkDraft(body, func(s string) bool {
		ids := citedIDs(s)
		if len(ids) == 0 {
			return true
		}
		c := Conclusion{ID: fmt.Sprintf("c%d", len(conclusions)+1), Text: s, EvidenceIDs: ids}
		seen := map[string]bool{}
		for _, id := range ids {
			if src := byID[id].Source; !seen[src] {
				seen[src] = true
				c.Sources = append(c.Sources, src)
			}
		}
		conclusions = append(conclusions, c)
		return true
	})
	numbered, order := renumber(body)
	num := map[string]int{}
	for i, id := range order {
		num[id] = i + 1
	}
	for i := range conclusions {
		conclusions[i].Text, _ = renumberWith(conclusions[i].Text, num)
	}

	title := "# " + plan.Question
	lines := strings.Split(numbered, "\n")
	if len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "# ") {
		title = strings.TrimSpace(lines[0])
		numbered = strings.TrimSpace(strings.Join(lines[1:], "\n"))
	}
	engine := r.cfg.Roles.Engine
	if engine == "" {
		engine = "custom"
	}
	engineText := engine
	if engine == "extractive" {
		engineText = tx.extractive
	}
	var b strings.Builder
	b.WriteString(title + "\n\n")
	fmt.Fprintf(&b, "> %s: %s · run %s · %s\n", tx.engine, engineText, r.id, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	cut := r.cutShortText()
	if cut != "" {
		b.WriteString(">\n> ⚠ " + fmt.Sprintf(tx.cutShort, cut) + "\n")
	}
	if out.partial {
		b.WriteString(">\n> ⚠ " + tx.partial + "\n")
	}
	b.WriteString("\n")
	if strings.TrimSpace(numbered) == "" || len(order) == 0 {
		if strings.TrimSpace(numbered) != "" {
			b.WriteString(numbered + "\n\n") // headings only, such as a note that the sources do not cover the question
		}
		b.WriteString(tx.empty + "\n\n")
		// Which sub-questions the sources leave open, whatever the engine wrote (or had removed) about them.
		var open []string
		for _, sq := range plan.SubQuestions {
			if q := strings.TrimSpace(sq.Question); q != "" && !strings.Contains(numbered, q) {
				open = append(open, "- "+q)
			}
		}
		if len(open) > 0 {
			b.WriteString(tx.uncovered + "\n\n" + strings.Join(open, "\n") + "\n\n")
		}
	} else {
		b.WriteString(numbered + "\n\n")
	}
	if len(removed) > 0 {
		b.WriteString("_" + fmt.Sprintf(tx.removed, len(removed)) + "_\n\n")
	}

	rep := &Report{RunID: r.id, Question: plan.Question, Language: lang, Engine: engine, CutShort: cut,
		Removed: removed, Dir: r.dir, Created: r.created, Finished: time.Now(), CitationMap: conclusions,
		Citations: []Citation{}, Sources: []SourceRef{}, Evidence: all}
	if rep.Evidence == nil {
		rep.Evidence = []Evidence{}
	}
	srcIdx := map[string]int{}
	works := r.works(ctx)
	for i, id := range order {
		e := byID[id]
		rep.Citations = append(rep.Citations, Citation{N: i + 1, EvidenceIDs: []string{id}})
		// One entry per document: quotes cited by their own lines of one file share it, and the evidence list
		// below keeps each quote's anchor.
		key := documentKey(e.Source)
		j, ok := srcIdx[key]
		if !ok {
			j = len(rep.Sources)
			srcIdx[key] = j
			u := e.Source
			if _, _, anchored := lineAnchor(u); anchored {
				u = stripFragment(u)
			}
			rep.Sources = append(rep.Sources, SourceRef{URL: u, Title: e.Title, Work: works[key]})
		}
		rep.Sources[j].Citations = append(rep.Sources[j].Citations, i+1)
		rep.Sources[j].EvidenceIDs = append(rep.Sources[j].EvidenceIDs, id)
	}
	if len(rep.Sources) > 0 {
		b.WriteString("## " + tx.sources + "\n\n")
		for i, s := range rep.Sources {
			name := s.Title
			if name == "" {
				name = s.URL
			}
			cites := make([]string, len(s.Citations))
			for k, n := range s.Citations {
				cites[k] = fmt.Sprintf("[%d]", n)
			}
			fmt.Fprintf(&b, "%d. [%s](%s) — %s %s\n", i+1, escapeLinkText(name), s.URL, tx.citedAs, strings.Join(cites, ", "))
		}
		b.WriteString("\n## " + tx.citations + "\n\n")
		for i, id := range order {
			e := byID[id]
			fmt.Fprintf(&b, "- [%d] “%s” — %s (%s)%s\n", i+1, oneLine(e.Quote), e.Source, id, storedTextLink(docs, e, tx))
		}
	}
	rep.Stats = r.stats(ctx)
	rep.Stats.DraftsRefused = out.refused
	rep.Stats.SentencesRemoved = len(removed)
	writeHowMade(&b, tx, rep.Stats, engine == "extractive")
	rep.Markdown = strings.TrimRight(b.String(), "\n") + "\n"
	return rep
}

// storedTextLink links a quote of a web page, an HTML or a PDF document to the lines where it stands in the text
// the run read and kept in its folder (a relative link from report.md); a Markdown or text file's own line anchor
// already names them, and gets nothing.
func storedTextLink(docs func(source string) (*docEntry, error), e Evidence, tx i18n) string {
	d, err := docs(e.Source)
	if err != nil || d.idx == nil {
		return ""
	}
	ct := strings.ToLower(d.doc.ContentType)
	if isFileURL(e.Source) && (ct == "" || strings.Contains(ct, "markdown") || strings.Contains(ct, "text/plain")) {
		return ""
	}
	first, last, ok := d.idx.quoteLines(d.doc.Text, e.Quote)
	if !ok {
		return ""
	}
	rel := filepath.ToSlash(filepath.Join(DocsDir, d.doc.Hash+".txt"))
	return fmt.Sprintf(" · [%s %d–%d](%s#L%d-L%d)", tx.textRead, first, last, rel, first, last)
}

func escapeLinkText(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`, "\n", " ").Replace(s)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// renumberWith rewrites evidence-id markers with an existing numbering.
func renumberWith(s string, num map[string]int) (string, bool) {
	ok := true
	out := markerRe.ReplaceAllStringFunc(s, func(m string) string {
		ids, _ := parseMarker(markerRe.FindStringSubmatch(m)[1])
		var parts []string
		for _, id := range ids {
			n, found := num[id]
			if !found {
				ok = false
				continue
			}
			parts = append(parts, fmt.Sprint(n))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	})
	return out, ok
}

// stats reads the run's figures from the tables, so they are complete across resumed attempts.
func (r *runner) stats(ctx context.Context) Stats {
	var s Stats
	r.mu.Lock()
	s.Rounds = r.rounds
	if r.plan != nil {
		s.SubQuestions = len(r.plan.SubQuestions)
	}
	r.mu.Unlock()
	if names, err := r.db.StepNames(ctx, "search:"); err == nil {
		s.Searches = len(names)
	}
	if names, err := r.db.StepNames(ctx, "read:"); err == nil {
		s.SourcesRead = len(names)
	}
	if names, err := r.db.StepNames(ctx, "unreadable:"); err == nil {
		s.SourcesUnreadable = len(names)
	}
	r.mu.Lock()
	s.FusesTripped = len(r.cutShort)
	r.mu.Unlock()
	if names, err := r.db.StepNames(ctx, "pick:"); err == nil {
		for _, n := range names {
			var cs []Candidate
			if ok, _ := r.db.Step(ctx, n, &cs); ok {
				s.Candidates += len(cs)
			}
		}
	}
	if log, err := r.db.Log(ctx, ""); err == nil {
		for _, e := range log {
			switch e.Decision {
			case "ungrounded":
				s.Ungrounded++
			case "early stop":
				s.EarlyStops++
			case "fetch failed":
				s.FetchErrors++
			case "error", "partial error":
				s.RoleErrors++
			case "removed":
				s.SentencesRemoved++
			}
		}
	}
	if pool, err := r.db.Evidence(ctx, ""); err == nil {
		for _, e := range pool {
			if e.Status == state.Accepted {
				s.EvidenceAccepted++
			} else {
				s.EvidenceRejected++
			}
		}
	}
	s.Tokens, s.CostUSD, s.Calls = r.spendNow()
	s.PeakConcurrency = r.fleet.Peak()
	s.Duration = time.Since(r.created)
	return s
}

// publish writes report.md, report.json and the citation map, then marks the run done. The step marker comes
// last, so a crash before it simply re-synthesises on resume.
func (r *runner) publish(ctx context.Context, rep *Report) error {
	num := make(map[string]int, len(rep.Citations))
	for _, ci := range rep.Citations {
		num[ci.EvidenceIDs[0]] = ci.N
	}
	source := make(map[string]string, len(rep.Evidence))
	for _, e := range rep.Evidence {
		source[e.ID] = e.Source
	}
	var rows []state.Citation
	for _, c := range rep.CitationMap {
		for _, id := range c.EvidenceIDs {
			rows = append(rows, state.Citation{ConclusionID: c.ID, Text: c.Text, EvidenceID: id, Source: source[id], N: num[id]})
		}
	}
	if err := r.db.SetCitations(ctx, rows); err != nil {
		return fmt.Errorf("research: citation map: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(r.dir, ReportMarkdownFile), []byte(rep.Markdown)); err != nil {
		return fmt.Errorf("research: write report: %w", err)
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, ReportJSONFile), rep); err != nil {
		return fmt.Errorf("research: %w", err)
	}
	// The step marker, the run's status and the log row commit together.
	b := r.db.Batch()
	if err := b.MarkStep("synth", map[string]int{"citations": len(rep.Citations)}); err != nil {
		return err
	}
	b.SetMeta("cut_short", rep.CutShort)
	b.SetMeta("finished", rep.Finished.UTC().Format(time.RFC3339Nano))
	b.SetMeta("status", RunDone)
	r.logTo(b, StageSynth, r.currentRound(), "", "published", filepath.Join(r.dir, ReportMarkdownFile), nil)
	return b.Commit(ctx)
}

// judgeSupport asks the verifier tier, in one batched call, whether the draft's sentences that pass the
// deterministic checks are supported by their quotes, and records the unsupported ones in c.Judged. Sentences
// judged before are not asked about again; a failed judgement is logged and judges nothing.
func (r *runner) judgeSupport(ctx context.Context, plan *Plan, c Checker, judged map[string]bool, draft string) {
	j, ok := r.cfg.Roles.Verifier.(SupportJudge)
	if !ok {
		return
	}
	var claims []SupportClaim
	for _, cl := range c.SupportClaims(draft) {
		if !judged[cl.Sentence] {
			claims = append(claims, cl)
		}
	}
	for start := 0; start < len(claims); start += maxJudgeBatch {
		batch := claims[start:min(start+maxJudgeBatch, len(claims))]
		var verdicts []SupportVerdict
		err := r.roleCall(ctx, StageSynth, r.currentRound(), "", fmt.Sprintf("judge support of %d sentences", len(batch)), nil,
			func(ctx context.Context) error {
				v, err := j.JudgeSupport(ctx, plan.Language, batch)
				verdicts = v
				return err
			})
		if err != nil {
			return // logged by roleCall; the deterministic checks stand alone
		}
		byID := map[string]string{}
		for _, cl := range batch {
			byID[cl.ID] = cl.Sentence
			judged[cl.Sentence] = true
		}
		for _, v := range verdicts {
			if s, ok := byID[v.ID]; ok && !v.Supported {
				reason := strings.TrimSpace(v.Reason)
				if reason == "" {
					reason = "the judge found the quotes do not say this"
				}
				c.Judged[s] = reason
			}
		}
	}
}

// maxJudgeBatch bounds the sentences one support judgement sees.
const maxJudgeBatch = 40

// fallbackDraft is the report of a run whose synthesis failed: per sub-question, the grounded quotes themselves.
func fallbackDraft(plan *Plan, accepted []Evidence) string {
	var b strings.Builder
	b.WriteString("# " + plan.Question + "\n")
	bySQ := map[string][]Evidence{}
	for _, e := range accepted {
		bySQ[e.SubQuestion] = append(bySQ[e.SubQuestion], e)
	}
	for _, sq := range plan.SubQuestions {
		if len(bySQ[sq.ID]) == 0 {
			continue
		}
		b.WriteString("\n## " + sq.Question + "\n\n")
		for _, e := range bySQ[sq.ID] {
			fmt.Fprintf(&b, "- %s [%s]\n", oneLine(e.Quote), e.ID)
		}
	}
	return b.String()
}

// writeHowMade ends a report with the counts a reader needs to judge it: what was read, and everything that
// went wrong on the way — failed calls, unreadable sources, invented quotes, removed sentences, refused drafts,
// tripped fuses — in the report's language.
func writeHowMade(b *strings.Builder, tx i18n, s Stats, noModel bool) {
	b.WriteString("\n## " + tx.howMade + "\n\n")
	if noModel {
		fmt.Fprintf(b, "- "+tx.readNoModel+"\n", s.SourcesRead, s.SubQuestions, s.Rounds, s.EvidenceAccepted)
	} else {
		fmt.Fprintf(b, "- "+tx.howLines[0]+"\n", s.SourcesRead, s.SubQuestions, s.Rounds, s.EvidenceAccepted, s.Calls,
			lexical.Thousands(s.Tokens))
	}
	for i, n := range []int{s.RoleErrors, s.SourcesUnreadable, s.Ungrounded, s.SentencesRemoved, s.DraftsRefused, s.FusesTripped} {
		fmt.Fprintf(b, "- "+tx.howLines[i+1]+"\n", n)
	}
}
