package research

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/research/publish"
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
	in := SynthesisInput{Plan: plan, Evidence: accepted, Verdict: verdict, CutShort: r.cutShortText(), Instructions: r.rc.Instructions}
	in.Words, _ = LengthWords(r.rc.Length)
	// With a judge configured the check fails closed: a sentence is published only with a positive verdict.
	_, hasJudge := r.cfg.Roles.Verifier.(publish.SupportJudge)
	checker := publish.Checker{Evidence: check, Question: plan.Question, Judged: map[string]string{}, Approved: map[string]bool{},
		Unjudged: map[string]string{}, RequireVerdict: hasJudge,
		Quote: func(id string) (string, string, bool) {
			e, ok := byID[id]
			return e.Quote, e.Title, ok
		}}.WithMemo()
	if hasJudge && r.rc.Unjudged == UnjudgedKeep {
		checker.UnjudgedMark = textsFor(plan.Language).unjudgedMark
	}
	var draft string
	notCovered := false // the draft says the sources do not cover the question (Draft.NotCovered)
	var synthErr error
	attempts, refused, degenerate, repeats := 0, 0, 0, 0
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
		degenerate += got.Loops
		repeats += got.Repeats
		// A report wrapped in a code fence is the report, not code; markers in other forms become [e3].
		draft = publish.CanonicalMarkers(publish.UnwrapReport(got.Markdown))
		notCovered = got.NotCovered
		r.judgeSupport(sctx, plan, checker, draft)
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
	tally := checker.Tally(draft)
	body, removed := checker.Prune(draft)
	nothingLeft := false
	if !partial && !notCovered && len(publish.CitedIDs(body)) == 0 && len(accepted) > 0 {
		// Not one sentence of the draft could be published, yet the run holds grounded quotes: the report lists
		// them rather than saying the sources answer nothing.
		nothingLeft = true
		var more []publish.Removal
		body, more = checker.Prune(fallbackDraft(plan, accepted))
		removed = append(removed, more...)
		r.logf(ctx, StageSynth, r.currentRound(), "", "partial report", "no sentence of the draft could be published; the report lists the grounded evidence", nil)
	}
	for _, rm := range removed {
		r.logf(ctx, StageSynth, r.currentRound(), "", "removed", rm.Cause+": "+rm.Text, nil)
	}
	r.mu.Lock()
	r.synthN = attempts
	r.mu.Unlock()

	rep := r.render(ctx, plan, body, removed, all, docs, synthOutcome{partial: partial, nothingLeft: nothingLeft,
		refused: refused, degenerate: degenerate, repeats: repeats, judge: tally, hasJudge: hasJudge, keepUnjudged: checker.UnjudgedMark != ""})
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
func evidenceCheck(byID map[string]Evidence, docs func(source string) (*docEntry, error)) publish.EvidenceCheck {
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
		return publish.ErrNoEvidence
	}
	if e.Status != StatusAccepted {
		return fmt.Errorf("the verifier rejected it (%s)", e.Reason)
	}
	d, err := docs(e.Source)
	if err != nil {
		return fmt.Errorf("the text of its source is not available: %v", err)
	}
	if !publish.GroundedIn(d.norm, e.Quote) {
		return errors.New("its quote is not found in the source text")
	}
	// A quote cited by lines must stand on exactly those lines of the text that was read.
	if first, last, ok := publish.LineAnchor(e.Source); ok && d.idx != nil {
		a, b, found := d.idx.QuoteLines(d.doc.Text, e.Quote)
		if !found || !publish.QuoteInLines(d.doc.Text, e.Source, e.Quote) || last-first > b-a {
			return fmt.Errorf("its quote is not on the lines %s cites (it stands on lines %d-%d)", e.Source, a, b)
		}
	}
	return nil
}

// i18n holds the few fixed strings of a rendered report.
type i18n struct {
	engine, extractive, cutShort, sources, citations, citedAs, removed, empty, partial string
	howMade, textRead, atQuote                                                         string
	// nothingLeft replaces partial when the synthesis worked but none of its sentences could be published.
	nothingLeft string
	// uncovered opens the list of sub-questions a report that could support nothing leaves open.
	uncovered string
	// unjudgedMark follows a sentence kept without the judge's verdict (--unjudged keep).
	unjudgedMark string
	// short notes a report shorter than the length asked for.
	short string
	how   howTexts
}

// howTexts are the lines of "How this report was made"; each counts one thing.
type howTexts struct {
	// read: sources, sub-questions, rounds, quotes grounded, accepted as evidence, model calls, tokens.
	read string
	// readNoModel is read for the extractive engine: it makes no model calls and spends no tokens.
	readNoModel string
	// estimated follows the token figure when part of it was counted locally.
	estimated                                                 string
	rejected, instructions, ungrounded, removed, removedNone  string
	judge, unjudgedRemoved, unjudgedKept, noJudge, degenerate string
	refused, roleErrors, unreadable, fuses, depth             string
	causes                                                    map[string]string
}

var texts = map[string]i18n{
	"en": {
		engine:       "Engine",
		extractive:   "extractive mode — no language model",
		cutShort:     "Cut short: %s. This report is based on the evidence gathered before the cut.",
		sources:      "Sources",
		citations:    "Cited evidence",
		citedAs:      "cited as",
		removed:      "%d statement(s) of the draft were removed; the causes are counted below.",
		empty:        "No statement could be supported by grounded evidence.",
		uncovered:    "The sources searched answer none of these sub-questions:",
		partial:      "Partial report: the synthesis failed, so this report lists the grounded evidence the run gathered, unedited.",
		nothingLeft:  "Partial report: no sentence of the draft could be published with the support of its quotes, so this report lists the grounded evidence the run gathered, unedited.",
		howMade:      "How this report was made",
		textRead:     "text read, lines",
		atQuote:      "at the quote",
		unjudgedMark: "⚠ *unverified*",
		short:        "This report has %d words of the about %d asked for: the grounded evidence the run found supports no more, and nothing was added without it.",
		how: howTexts{
			read:            "%d sources read for %d sub-questions in %d round(s); %d quotes grounded in their sources, %d accepted as evidence; %d model calls, %s tokens",
			readNoModel:     "%d sources read for %d sub-questions in %d round(s); %d quotes grounded in their sources, %d accepted as evidence; no language model",
			estimated:       " (%s of them estimated with a tokenizer: the server reported no usage)",
			rejected:        "evidence rejected by the verifier: %d",
			instructions:    "evidence refused because its quote gives instructions to the reader or the model: %d",
			ungrounded:      "quotes dropped because they are not in their source: %d",
			removed:         "sentences removed: %d (%s)",
			removedNone:     "sentences removed: 0",
			judge:           "sentences judged by the support judge: %d (%d supported, %d refused); without a verdict: %d",
			unjudgedRemoved: "sentences without a verdict, removed: %d (%s)",
			unjudgedKept:    "sentences without a verdict, kept and marked ⚠ unverified: %d (%s)",
			noJudge:         "no support judge: the deterministic checks alone decided what was published",
			degenerate:      "drafts stopped because they repeated themselves: %d; repeated sentences removed: %d",
			refused:         "drafts refused by the integrity check: %d",
			roleErrors:      "model calls that failed after retries: %d",
			unreadable:      "sources that could not be read: %d",
			fuses:           "fuses tripped: %d",
			depth:           "depth: %s (%s)",
			causes: map[string]string{publish.CauseUnsupported: "unsupported by the quotes they cite", publish.CauseUnjudged: "no verdict from the judge",
				publish.CauseCitationFormat: "citation format", publish.CauseDuplicate: "duplicates", publish.CauseInstruction: "addressed to the reader or the model"},
		},
	},
	"zh": {
		engine:       "引擎",
		extractive:   "抽取式模式（extractive mode — no language model）",
		cutShort:     "提前结束：%s。本报告基于结束前收集到的证据。",
		sources:      "来源",
		citations:    "引用的证据",
		citedAs:      "引用编号",
		removed:      "草稿中有 %d 条陈述被删除，原因见下文统计。",
		empty:        "没有任何陈述能得到可溯源证据的支持。",
		uncovered:    "所检索的来源没有回答以下任何子问题：",
		partial:      "不完整的报告：综合撰写失败，本报告仅列出本次运行收集到的可溯源证据，未经整理。",
		nothingLeft:  "不完整的报告：草稿中没有任何句子能得到其引文的支持，因此本报告仅列出本次运行收集到的可溯源证据，未经整理。",
		howMade:      "本报告的生成方式",
		textRead:     "所读文本，行",
		atQuote:      "打开原文位置",
		unjudgedMark: "⚠ *未经核验*",
		short:        "本报告约 %d 字，少于要求的约 %d 字：本次运行找到的可溯源证据只能支持这么多，没有添加无证据的内容。",
		how: howTexts{
			read:            "为 %[2]d 个子问题阅读了 %[1]d 个来源，共 %[3]d 轮；%[4]d 条引文可在来源中逐字找到，其中 %[5]d 条被采纳为证据；模型调用 %[6]d 次，%[7]s 个 token",
			readNoModel:     "为 %[2]d 个子问题阅读了 %[1]d 个来源，共 %[3]d 轮；%[4]d 条引文可在来源中逐字找到，其中 %[5]d 条被采纳为证据；未使用语言模型",
			estimated:       "（其中 %s 个由分词器估算：服务器未报告用量）",
			rejected:        "被核查者否决的证据：%d",
			instructions:    "因引文向读者或模型下达指令而被拒绝的证据：%d",
			ungrounded:      "因不在来源中而被丢弃的引文：%d",
			removed:         "删除的句子：%d（%s）",
			removedNone:     "删除的句子：0",
			judge:           "经支持度评审的句子：%d（支持 %d，否决 %d）；没有结论的：%d",
			unjudgedRemoved: "没有评审结论而被删除的句子：%d（%s）",
			unjudgedKept:    "没有评审结论但保留并标记为 ⚠ 未经核验的句子：%d（%s）",
			noJudge:         "没有支持度评审：仅由确定性检查决定发布内容",
			degenerate:      "因内容自我重复而被中止的草稿：%d；删除的重复句子：%d",
			refused:         "被完整性检查退回的草稿：%d",
			roleErrors:      "重试后仍失败的模型调用：%d",
			unreadable:      "无法读取的来源：%d",
			fuses:           "触发的熔断：%d",
			depth:           "研究深度：%s（%s）",
			causes: map[string]string{publish.CauseUnsupported: "引文不支持", publish.CauseUnjudged: "评审未给出结论",
				publish.CauseCitationFormat: "引用格式错误", publish.CauseDuplicate: "重复", publish.CauseInstruction: "向读者或模型下达指令"},
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
	partial     bool // the synthesis failed; the body lists the grounded evidence
	nothingLeft bool // no sentence of the draft could be published; the body lists the grounded evidence
	refused     int  // drafts the integrity check refused
	degenerate  int  // drafts the synthesizer stopped because they repeated themselves
	repeats     int  // sentences removed from drafts because they repeated an earlier one
	judge       publish.JudgeStats
	hasJudge    bool
	// keepUnjudged: sentences without a verdict were kept, marked (--unjudged keep).
	keepUnjudged bool
}

func (r *runner) render(ctx context.Context, plan *Plan, body string, removed []publish.Removal, all []Evidence,
	docs func(source string) (*docEntry, error), out synthOutcome) *Report {
	lang := plan.Language
	tx := textsFor(lang)
	byID := map[string]Evidence{}
	for _, e := range all {
		byID[e.ID] = e
	}
	// The citation map, sentence by sentence, from the evidence-id form.
	var conclusions []Conclusion
	publish.WalkDraft(body, func(s string) bool {
		ids := publish.CitedIDs(s)
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
	numbered, order := publish.Renumber(body)
	num := map[string]int{}
	for i, id := range order {
		num[id] = i + 1
	}
	for i := range conclusions {
		conclusions[i].Text, _ = publish.RenumberWith(conclusions[i].Text, num)
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
	followLine, follows := r.followsHeader(ctx, lang)
	b.WriteString(followLine)
	cut := r.cutShortText()
	if cut != "" {
		b.WriteString(">\n> ⚠ " + fmt.Sprintf(tx.cutShort, cut) + "\n")
	}
	if out.partial {
		b.WriteString(">\n> ⚠ " + tx.partial + "\n")
	} else if out.nothingLeft {
		b.WriteString(">\n> ⚠ " + tx.nothingLeft + "\n")
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

	texts := make([]string, len(removed))
	byCause := map[string]int{}
	for i, rm := range removed {
		texts[i] = rm.Text
		byCause[rm.Cause]++
	}
	rep := &Report{RunID: r.id, Question: plan.Question, Language: lang, Engine: engine, CutShort: cut,
		Removed: texts, Removals: removed, Dir: r.dir, Created: r.created, Finished: time.Now(), CitationMap: conclusions,
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
			if _, _, anchored := publish.LineAnchor(u); anchored {
				u = publish.StripFragment(u)
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
			at := ""
			if u, ok := TextFragmentURL(e.Source, e.Quote); ok {
				at = fmt.Sprintf(" · [%s](%s)", tx.atQuote, u)
			}
			fmt.Fprintf(&b, "- [%d] “%s” — %s (%s)%s%s\n", i+1, oneLine(e.Quote), e.Source, id, at, storedTextLink(docs, e, tx))
		}
	}
	rep.Stats = r.stats(ctx)
	rep.Stats.DraftsRefused = out.refused
	rep.Stats.SentencesRemoved = len(removed)
	rep.Stats.DegenerateDrafts = out.degenerate
	rep.Stats.RepeatedSentences = out.repeats
	if len(byCause) > 0 {
		rep.Stats.RemovedByCause = byCause
	}
	if out.hasJudge {
		j := out.judge
		j.Kept = out.keepUnjudged
		rep.Stats.Judge = &j
	}
	if words, _ := LengthWords(r.rc.Length); words > 0 && !out.partial {
		// The integrity check is the same at every length: a report shorter than asked for says so.
		if got := CountWords(numbered); got < words*3/5 {
			b.WriteString("_" + fmt.Sprintf(tx.short, got, words) + "_\n\n")
			rep.ShortOf = words
		}
	}
	rep.Depth, rep.DepthReason = plan.Depth, plan.DepthReason
	rep.Follows = follows
	writeHowMade(&b, tx, rep.Stats, engine == "extractive")
	b.WriteString(followsHowMade(follows, lang))
	if plan.Depth != "" {
		fmt.Fprintf(&b, "- "+tx.how.depth+"\n", plan.Depth, plan.DepthReason)
	}
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
	if publish.IsFileURL(e.Source) && (ct == "" || strings.Contains(ct, "markdown") || strings.Contains(ct, "text/plain")) {
		return ""
	}
	first, last, ok := d.idx.QuoteLines(d.doc.Text, e.Quote)
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

// stats reads the run's figures from the tables, so they are complete across resumed attempts.
func (r *runner) stats(ctx context.Context) Stats {
	var s Stats
	r.mu.Lock()
	s.Rounds = r.rounds
	if r.plan != nil {
		s.SubQuestions = len(r.plan.SubQuestions)
	}
	r.mu.Unlock()
	if t, err := r.db.Tally(ctx, "search:", "read:", "unreadable:"); err == nil {
		searches, reads := r.carried(ctx) // a follow-up's markers carried over from the earlier run are not its own work
		s.Searches, s.SourcesRead, s.SourcesUnreadable = t.Steps[0]-searches, t.Steps[1]-reads, t.Steps[2]
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
			case "instruction":
				s.InstructionsRefused++
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
	s.QuotesGrounded = s.EvidenceAccepted + s.EvidenceRejected + s.InstructionsRefused
	s.Tokens, s.CostUSD, s.Calls = r.spendNow()
	s.TokensEstimated = r.estimatedTokens()
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

// judgeSupport asks the verifier tier, in batched calls, whether the draft's sentences that pass the
// deterministic checks are supported by their quotes, and records each verdict in c.Approved or c.Judged.
// Sentences with a verdict are not asked about again. A sentence the judge's answer leaves out (an empty list, a
// list cut by the output limit) or whose call fails is asked about again, alone with the other missing ones, in
// smaller batches, at most maxJudgeReasks more times; one still without a verdict is recorded in c.Unjudged
// with the reason, and the check removes it (or marks it, with --unjudged keep).
func (r *runner) judgeSupport(ctx context.Context, plan *Plan, c publish.Checker, draft string) {
	j, ok := r.cfg.Roles.Verifier.(publish.SupportJudge)
	if !ok {
		return
	}
	var pending []publish.SupportClaim
	for _, cl := range c.SupportClaims(draft) {
		_, refused := c.Judged[cl.Sentence]
		_, gaveUp := c.Unjudged[cl.Sentence]
		if !c.Approved[cl.Sentence] && !refused && !gaveUp {
			pending = append(pending, cl)
		}
	}
	why := map[string]string{}
	size := maxJudgeBatch
	for ask := 0; ask <= maxJudgeReasks && len(pending) > 0; ask++ {
		if ask > 0 {
			size = max(min(size/2, (len(pending)+1)/2), minJudgeBatch)
			r.logf(ctx, StageSynth, r.currentRound(), "", "judge again",
				fmt.Sprintf("%d sentences have no verdict; asking again in batches of %d", len(pending), size), nil)
		}
		var missing []publish.SupportClaim
		answered := false
		for start := 0; start < len(pending); start += size {
			batch := pending[start:min(start+size, len(pending))]
			var verdicts []publish.SupportVerdict
			err := r.roleCall(ctx, StageSynth, r.currentRound(), "", fmt.Sprintf("judge support of %d sentences", len(batch)), nil,
				func(ctx context.Context) error {
					v, err := j.JudgeSupport(ctx, plan.Language, batch)
					verdicts = v
					return err
				})
			if err != nil {
				reason := "the judge call failed: " + lexical.Clip(r.scrub.Scrub(err.Error()), 120)
				if errors.Is(err, errFuse) {
					reason = "the run's budget ran out before it was judged"
				}
				for _, cl := range batch {
					if why[cl.Sentence] == "" || !strings.HasPrefix(why[cl.Sentence], "the judge call failed") {
						why[cl.Sentence] = reason
					}
				}
				missing = append(missing, batch...)
				if ctx.Err() != nil || errors.Is(err, errFuse) {
					pending = append(missing, pending[min(start+size, len(pending)):]...)
					ask = maxJudgeReasks // no more asks
					break
				}
				continue
			}
			answered = true
			got := map[string]publish.SupportVerdict{}
			for _, v := range verdicts {
				if prev, dup := got[v.ID]; dup && !prev.Supported {
					continue // two verdicts on one sentence: the refusal stands
				}
				got[v.ID] = v
			}
			for _, cl := range batch {
				v, ok := got[cl.ID]
				switch {
				case !ok:
					why[cl.Sentence] = "the judge's answer left it out"
					missing = append(missing, cl)
				case v.Supported:
					c.Approved[cl.Sentence] = true
				default:
					reason := strings.TrimSpace(v.Reason)
					if reason == "" {
						reason = "the judge found the quotes do not say this"
					}
					c.Judged[cl.Sentence] = reason
				}
			}
		}
		if ask < maxJudgeReasks {
			pending = missing
		}
		if !answered && ask > 0 {
			break // the judge answered none of a second round's calls: it is not answering
		}
	}
	for _, cl := range pending {
		if !c.Approved[cl.Sentence] {
			if _, refused := c.Judged[cl.Sentence]; !refused {
				c.Unjudged[cl.Sentence] = why[cl.Sentence]
			}
		}
	}
}

// maxJudgeBatch bounds the sentences one support judgement sees; a sentence without a verdict is asked about
// again at most maxJudgeReasks times, in batches halved each time down to minJudgeBatch.
const (
	maxJudgeBatch  = 40
	maxJudgeReasks = 2
	minJudgeBatch  = 4
)

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
			// Every sentence of the quote carries its citation, so that each stands as a quote of its own.
			var parts []string
			for _, f := range publish.QuoteFragments(oneLine(e.Quote)) {
				for _, sent := range publish.SplitSentences(f) {
					parts = append(parts, sent+" ["+e.ID+"]")
				}
			}
			fmt.Fprintf(&b, "- %s\n", strings.Join(parts, " … "))
		}
	}
	return b.String()
}

// writeHowMade ends a report with the counts a reader needs to judge it: what was read and grounded, and
// everything that went wrong on the way — evidence rejected or refused, invented quotes, sentences removed (by
// cause), what the support judge said and did not say, refused and degenerate drafts, failed calls, unreadable
// sources, tripped fuses — each counted on its own, in the report's language.
func writeHowMade(b *strings.Builder, tx i18n, s Stats, noModel bool) {
	h := tx.how
	b.WriteString("\n## " + tx.howMade + "\n\n")
	if noModel {
		fmt.Fprintf(b, "- "+h.readNoModel+"\n", s.SourcesRead, s.SubQuestions, s.Rounds, s.QuotesGrounded, s.EvidenceAccepted)
	} else {
		tokens := lexical.Thousands(s.Tokens)
		if s.TokensEstimated > 0 {
			tokens += fmt.Sprintf(h.estimated, lexical.Thousands(s.TokensEstimated))
		}
		fmt.Fprintf(b, "- "+h.read+"\n", s.SourcesRead, s.SubQuestions, s.Rounds, s.QuotesGrounded, s.EvidenceAccepted, s.Calls, tokens)
	}
	line := func(format string, args ...any) { fmt.Fprintf(b, "- "+format+"\n", args...) }
	line(h.rejected, s.EvidenceRejected)
	line(h.instructions, s.InstructionsRefused)
	line(h.ungrounded, s.Ungrounded)
	if s.SentencesRemoved == 0 {
		line(h.removedNone)
	} else {
		line(h.removed, s.SentencesRemoved, causeList(h, s.RemovedByCause))
	}
	switch j := s.Judge; {
	case j != nil:
		line(h.judge, j.Judged, j.Supported, j.Refused, j.Unjudged)
		if j.Unjudged > 0 {
			whys := make([]string, 0, len(j.Why))
			for w, n := range j.Why {
				whys = append(whys, fmt.Sprintf("%s: %d", w, n))
			}
			sort.Strings(whys)
			if j.Kept {
				line(h.unjudgedKept, j.Unjudged, strings.Join(whys, "; "))
			} else {
				line(h.unjudgedRemoved, j.Unjudged, strings.Join(whys, "; "))
			}
		}
	case !noModel:
		line(h.noJudge)
	}
	if !noModel {
		line(h.degenerate, s.DegenerateDrafts, s.RepeatedSentences)
	}
	line(h.refused, s.DraftsRefused)
	line(h.roleErrors, s.RoleErrors)
	line(h.unreadable, s.SourcesUnreadable)
	line(h.fuses, s.FusesTripped)
}

// causeList names the causes of the removed sentences with their counts, in a fixed order.
func causeList(h howTexts, by map[string]int) string {
	var parts []string
	for _, c := range []string{publish.CauseUnsupported, publish.CauseUnjudged, publish.CauseCitationFormat, publish.CauseDuplicate, publish.CauseInstruction} {
		if n := by[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", h.causes[c], n))
		}
	}
	return strings.Join(parts, "; ")
}
