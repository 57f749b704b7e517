// Package qualitybench measures the answer quality of the extractive engine on real corpora that ship with Go
// (its documentation and the documentation of standard packages) and on the project's Chinese user guide
// (docs/zh, embedded in the binary): per
// question, the share of expected facts the report states in a cited sentence (fact recall), the share of cited
// quotes found verbatim in the cited file's text (citation grounding, which must be 100%), and the time.
package qualitybench

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deepresearch/deepresearch/docs/zh"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// Corpus names used by Question.Corpus.
const (
	CorpusGoDoc = "godoc"  // $(go env GOROOT)/doc
	CorpusGoPkg = "gopkg"  // package documentation extracted from $(go env GOROOT)/src
	CorpusZH    = "zhdocs" // the Chinese user guide, docs/zh (or Options.ZHDocsDir)
	CorpusGoSrc = "gosrc"  // Go source code: $(go env GOROOT)/src/context, sync and internal/sync
	// CorpusOtherSrc is source code in other languages that ships with Go: lib/wasm/wasm_exec.js (JavaScript),
	// src/runtime/runtime-gdb.py (Python), src/runtime/cgo/*.c (C), src/syscall/mkall.sh and mkerrors.sh (shell).
	CorpusOtherSrc = "othersrc"
	// Documentation trees of Debian packages, each from another HTML generator (scripts/install-test-deps
	// installs the packages; see questions_debiandocs.yaml).
	CorpusPyDocs   = "pydocs"   // python3.11-doc: Sphinx
	CorpusPgDocs   = "pgdocs"   // postgresql-doc-15: DocBook
	CorpusNodeDocs = "nodedocs" // nodejs-doc: Node.js's API-doc generator, with all.html repeating every page
	CorpusRustBook = "rustbook" // rust-doc: the Rust book, mdBook, with print.html and old-edition stubs
)

// Splits of the questions over the Debian documentation (Question.Split).
const (
	SplitTune    = "tune"    // changes to the engine may be tried against these
	SplitHeldOut = "heldout" // never tuned against: they only measure
	// SplitOlder selects the older questions, which have no split, in Options.Split (and names them in the
	// per-split totals).
	SplitOlder = "older"
)

// DebianDocs is where the Debian documentation packages put the trees of the pydocs, pgdocs, nodedocs and
// rustbook corpora.
const DebianDocs = "/usr/share/doc"

// questionFiles are the question tables: every questions*.yaml file of this package, read in name order, so a
// new family of questions (another corpus) is a new file.
//
//go:embed questions*.yaml
var questionFiles embed.FS

// Question is one benchmark question with the facts a good answer must contain and the documents that may
// answer it.
type Question struct {
	ID       string `yaml:"id" json:"id"`
	Corpus   string `yaml:"corpus" json:"corpus"`
	Question string `yaml:"question" json:"question"`
	// Facts: each fact is a list of keywords that must all occur in one cited sentence; "a|b" accepts either.
	Facts [][]string `yaml:"facts" json:"facts"`
	// Relevant are the documents that may answer the question, by file name ("go_mem.html"); "name#heading"
	// narrows one to the sections whose heading contains heading. A citation of anything else counts against
	// citation precision.
	Relevant []string `yaml:"relevant" json:"relevant,omitempty"`
	// Absent marks a question the corpus does not answer: the right report says so in a "not covered" line and
	// cites at most one sentence. It has no facts.
	Absent bool `yaml:"absent" json:"absent,omitempty"`
	// Twin is the id of the same question in the other language (a Chinese question's English original); the
	// bench reports both recalls side by side.
	Twin string `yaml:"twin" json:"twin,omitempty"`
	// Split is the half of the questions over the Debian documentation a question is in: SplitTune or
	// SplitHeldOut; empty for the older questions, which were written with the engine.
	Split string `yaml:"split" json:"split,omitempty"`
}

// Questions returns the built-in question set.
func Questions() ([]Question, error) {
	names, err := fs.Glob(questionFiles, "questions*.yaml")
	if err != nil {
		return nil, fmt.Errorf("quality questions: %w", err)
	}
	sort.Strings(names)
	var qs []Question
	for _, n := range names {
		data, err := questionFiles.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("quality questions: %w", err)
		}
		var part []Question
		if err := yaml.Unmarshal(data, &part); err != nil {
			return nil, fmt.Errorf("quality questions %s: %w", n, err)
		}
		qs = append(qs, part...)
	}
	ids := map[string]bool{}
	for _, q := range qs {
		if ids[q.ID] {
			return nil, fmt.Errorf("quality questions: duplicate id %q", q.ID)
		}
		ids[q.ID] = true
	}
	for _, q := range qs {
		switch {
		case q.ID == "" || q.Question == "":
			return nil, fmt.Errorf("quality questions: %q is incomplete", q.ID)
		case q.Absent && len(q.Facts) > 0:
			return nil, fmt.Errorf("quality questions: %s is absent from the corpus but lists facts", q.ID)
		case !q.Absent && (len(q.Facts) == 0 || len(q.Relevant) == 0):
			return nil, fmt.Errorf("quality questions: %s needs facts and relevant documents", q.ID)
		case q.Twin != "" && !ids[q.Twin]:
			return nil, fmt.Errorf("quality questions: %s: twin %q is not a question", q.ID, q.Twin)
		case q.Split != "" && q.Split != SplitTune && q.Split != SplitHeldOut:
			return nil, fmt.Errorf("quality questions: %s: split %q is neither %q nor %q", q.ID, q.Split, SplitTune, SplitHeldOut)
		}
		if _, ok := corpusPaths[q.Corpus]; !ok {
			return nil, fmt.Errorf("quality questions: %s: unknown corpus %q", q.ID, q.Corpus)
		}
	}
	return qs, nil
}

// Options configures Run. Zero fields mean defaults.
type Options struct {
	// GoRoot is the Go installation whose doc/ and src/ are the corpora; default `go env GOROOT`.
	GoRoot string
	// ZHDocsDir replaces the embedded Chinese user guide as the zhdocs corpus with the documents of this
	// folder; empty means the guide.
	ZHDocsDir string
	// WorkDir receives the indexes, extracted package docs and run folders; default a temporary directory that
	// is removed afterwards.
	WorkDir string
	// Only limits the run to these question ids; empty means all.
	Only []string
	// Split limits the run to the questions of one split: SplitTune, SplitHeldOut, or SplitOlder for those without
	// one; empty means all.
	Split string
	// DebianDocs is the folder holding the Debian documentation packages' trees; default DebianDocs.
	DebianDocs string
	// Log receives progress; nil discards it.
	Log *slog.Logger
}

// QuestionResult is one question's figures.
type QuestionResult struct {
	ID       string   `json:"id"`
	Corpus   string   `json:"corpus"`
	Language string   `json:"language"`
	Question string   `json:"question"`
	Facts    int      `json:"facts"`
	Found    int      `json:"found"`
	Recall   float64  `json:"recall"`
	Missing  []string `json:"missing,omitempty"`
	Absent   bool     `json:"absent,omitempty"`
	Twin     string   `json:"twin,omitempty"`
	Split    string   `json:"split,omitempty"`
	// Leads reports a report whose first cited sentence states one of the facts: what a reader sees first answers.
	Leads bool `json:"leads,omitempty"`
	// NotCovered reports a "not covered" line in the question's language; AbsentOK an absent question answered
	// right (that line, at most one citation).
	NotCovered bool    `json:"not_covered"`
	AbsentOK   bool    `json:"absent_ok,omitempty"`
	Citations  int     `json:"citations"` // cited evidence items checked
	Relevant   int     `json:"relevant"`  // cited items from the question's relevant documents
	Precision  float64 `json:"precision"`
	// Fragments are cited sentences that are not whole sentences (see Fragments); Repeats are claims cited more
	// than once.
	Fragments []string `json:"fragments,omitempty"`
	Repeats   []string `json:"repeats,omitempty"`
	// Furniture are cited sentences that are page furniture, not findings (see Furniture).
	Furniture  []string `json:"furniture,omitempty"`
	Grounded   int      `json:"grounded"`
	Grounding  float64  `json:"grounding"`
	Ungrounded []string `json:"ungrounded,omitempty"`
	// Markdown is the published report.
	Markdown string  `json:"markdown,omitempty"`
	Seconds  float64 `json:"seconds"`
	Error    string  `json:"error,omitempty"`
}

// Result is a whole bench run.
type Result struct {
	Questions []QuestionResult `json:"questions"`
	// Recall is the mean of the per-question recalls of the answerable questions; FactRecall is found facts
	// over all facts; Precision the mean citation precision of the answerable questions that cite anything.
	Recall    float64 `json:"recall"`
	Precision float64 `json:"precision"`
	Fragments int     `json:"fragments"`
	Repeats   int     `json:"repeats"`
	Furniture int     `json:"furniture"`
	Absent    int     `json:"absent"`
	AbsentOK  int     `json:"absent_ok"`
	// Leads counts the answerable questions whose report leads with a fact (QuestionResult.Leads), of Answerable.
	Leads      int    `json:"leads"`
	Answerable int    `json:"answerable"`
	Pairs      []Pair `json:"pairs,omitempty"`
	// Splits are the totals of each split: "older" (the questions without a split), "tune", "heldout".
	Splits     []SplitTotal `json:"splits,omitempty"`
	FactRecall float64      `json:"fact_recall"`
	Facts      int          `json:"facts"`
	Found      int          `json:"found"`
	Citations  int          `json:"citations"`
	Grounded   int          `json:"grounded"`
	Grounding  float64      `json:"grounding"`
	Failed     int          `json:"failed"`
	// Seconds is the total research time; IndexSeconds the time spent building the corpus indexes.
	Seconds      float64 `json:"seconds"`
	IndexSeconds float64 `json:"index_seconds"`
	GoVersion    string  `json:"go_version"`
	CPUs         int     `json:"cpus"`
}

// SplitTotal is the figures of one split of the questions.
type SplitTotal struct {
	Split      string  `json:"split"`
	Questions  int     `json:"questions"`
	Recall     float64 `json:"recall"`
	FactRecall float64 `json:"fact_recall"`
	Facts      int     `json:"facts"`
	Found      int     `json:"found"`
	Precision  float64 `json:"precision"`
	Furniture  int     `json:"furniture"`
	Fragments  int     `json:"fragments"`
	// Leads counts the answerable questions whose report leads with a fact, of Answerable.
	Leads      int `json:"leads"`
	Answerable int `json:"answerable"`
}

// Pair is a question and its twin in the other language.
type Pair struct {
	ID         string  `json:"id"`
	Twin       string  `json:"twin"`
	Recall     float64 `json:"recall"`
	TwinRecall float64 `json:"twin_recall"`
}

// Run answers the questions with the extractive engine through the research graph and scores the reports.
func Run(ctx context.Context, opts Options) (*Result, error) {
	qs, err := Questions()
	if err != nil {
		return nil, err
	}
	if len(opts.Only) > 0 {
		var sel []Question
		ids := make([]string, 0, len(qs))
		for _, q := range qs {
			ids = append(ids, q.ID)
			if slices.Contains(opts.Only, q.ID) {
				sel = append(sel, q)
			}
		}
		var unknown []string
		for _, id := range opts.Only {
			if !slices.Contains(ids, id) {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) > 0 {
			return nil, fmt.Errorf("quality bench: unknown question id %s; the ids are: %s", strings.Join(unknown, ", "), strings.Join(ids, ", "))
		}
		qs = sel
	}
	if opts.Split != "" {
		want := opts.Split
		switch want {
		case SplitTune, SplitHeldOut:
		case SplitOlder:
			want = ""
		default:
			return nil, fmt.Errorf("quality bench: split %q is none of %q, %q, %q", opts.Split, SplitTune, SplitHeldOut, SplitOlder)
		}
		qs = slices.DeleteFunc(qs, func(q Question) bool { return q.Split != want })
	}
	if opts.DebianDocs == "" {
		opts.DebianDocs = DebianDocs
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.GoRoot == "" {
		//lint:ignore SA1019 only a fallback for when the go command cannot be run
		opts.GoRoot = runtime.GOROOT()
		if out, err := execGoEnv(ctx); err == nil && out != "" {
			opts.GoRoot = out
		}
	}
	if opts.WorkDir == "" {
		dir, err := os.MkdirTemp("", "deepresearch-quality-")
		if err != nil {
			return nil, fmt.Errorf("quality bench: %w", err)
		}
		defer os.RemoveAll(dir)
		opts.WorkDir = dir
	}

	res := &Result{GoVersion: runtime.Version(), CPUs: runtime.NumCPU()}
	indexes := map[string]*corpus.Index{}
	defer func() {
		for _, ix := range indexes {
			ix.Close()
		}
	}()
	for _, q := range qs {
		ix := indexes[q.Corpus]
		if ix == nil {
			t0 := time.Now()
			ix, err = buildCorpus(ctx, opts, q.Corpus)
			if err != nil {
				return nil, err
			}
			res.IndexSeconds += time.Since(t0).Seconds()
			indexes[q.Corpus] = ix
		}
		qr := runQuestion(ctx, opts, ix, q)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		opts.Log.Info("quality", "id", q.ID, "recall", qr.Recall, "grounding", qr.Grounding, "seconds", qr.Seconds, "error", qr.Error)
		res.Questions = append(res.Questions, qr)
	}
	res.total()
	return res, nil
}

// total computes the result's totals from its questions, and those of each split.
func (res *Result) total() {
	res.sum()
	for _, split := range []string{"", SplitTune, SplitHeldOut} {
		var part []QuestionResult
		for _, qr := range res.Questions {
			if qr.Split == split {
				part = append(part, qr)
			}
		}
		if len(part) == 0 {
			continue
		}
		sub := &Result{Questions: part}
		sub.sum()
		name := split
		if name == "" {
			name = SplitOlder // the questions written with the engine, before the split
		}
		res.Splits = append(res.Splits, SplitTotal{Split: name, Questions: len(part), Recall: sub.Recall, FactRecall: sub.FactRecall,
			Facts: sub.Facts, Found: sub.Found, Precision: sub.Precision, Furniture: sub.Furniture, Fragments: sub.Fragments,
			Leads: sub.Leads, Answerable: sub.Answerable})
	}
}

// sum computes the result's totals from its questions.
func (res *Result) sum() {
	answerable, precise := 0, 0
	byID := map[string]QuestionResult{}
	for _, qr := range res.Questions {
		byID[qr.ID] = qr
		res.Facts += qr.Facts
		res.Found += qr.Found
		res.Citations += qr.Citations
		res.Grounded += qr.Grounded
		res.Seconds += qr.Seconds
		res.Fragments += len(qr.Fragments)
		res.Repeats += len(qr.Repeats)
		res.Furniture += len(qr.Furniture)
		if qr.Error != "" {
			res.Failed++
		}
		if qr.Absent {
			res.Absent++
			if qr.AbsentOK {
				res.AbsentOK++
			}
			continue
		}
		answerable++
		if qr.Leads {
			res.Leads++
		}
		res.Recall += qr.Recall
		if qr.Citations > 0 {
			precise++
			res.Precision += qr.Precision
		}
	}
	res.Answerable = answerable
	if answerable > 0 {
		res.Recall /= float64(answerable)
	}
	if precise > 0 {
		res.Precision /= float64(precise)
	}
	if res.Facts > 0 {
		res.FactRecall = float64(res.Found) / float64(res.Facts)
	}
	if res.Citations > 0 {
		res.Grounding = float64(res.Grounded) / float64(res.Citations)
	}
	for _, qr := range res.Questions {
		if tw, ok := byID[qr.Twin]; ok && qr.Twin != "" {
			res.Pairs = append(res.Pairs, Pair{ID: qr.ID, Twin: tw.ID, Recall: qr.Recall, TwinRecall: tw.Recall})
		}
	}
}

// corpusPaths are the corpora by name: each returns the files or folders to index. A new corpus is one entry.
var corpusPaths = map[string]func(opts Options) ([]string, error){
	CorpusGoDoc: func(opts Options) ([]string, error) { return []string{filepath.Join(opts.GoRoot, "doc")}, nil },
	CorpusGoSrc: func(opts Options) ([]string, error) {
		src := filepath.Join(opts.GoRoot, "src")
		return []string{filepath.Join(src, "context"), filepath.Join(src, "sync"), filepath.Join(src, "internal", "sync")}, nil
	},
	CorpusOtherSrc: func(opts Options) ([]string, error) {
		src := filepath.Join(opts.GoRoot, "src")
		cfiles, err := filepath.Glob(filepath.Join(src, "runtime", "cgo", "*.c"))
		if err != nil {
			return nil, fmt.Errorf("quality bench: corpus %s: %w", CorpusOtherSrc, err)
		}
		return append([]string{filepath.Join(opts.GoRoot, "lib", "wasm", "wasm_exec.js"), filepath.Join(src, "runtime", "runtime-gdb.py"),
			filepath.Join(src, "syscall", "mkall.sh"), filepath.Join(src, "syscall", "mkerrors.sh")}, cfiles...), nil
	},
	CorpusGoPkg: func(opts Options) ([]string, error) {
		dir := filepath.Join(opts.WorkDir, "gopkg")
		if err := WritePackageDocs(opts.GoRoot, dir, Packages); err != nil {
			return nil, err
		}
		return []string{dir}, nil
	},
	CorpusPyDocs: func(opts Options) ([]string, error) {
		html := filepath.Join(opts.DebianDocs, "python3.11-doc", "html")
		return []string{filepath.Join(html, "tutorial"), filepath.Join(html, "howto"), filepath.Join(html, "faq"),
			filepath.Join(html, "glossary.html")}, nil
	},
	CorpusPgDocs: func(opts Options) ([]string, error) {
		return []string{filepath.Join(opts.DebianDocs, "postgresql-doc-15", "html")}, nil
	},
	CorpusNodeDocs: func(opts Options) ([]string, error) {
		return []string{filepath.Join(opts.DebianDocs, "nodejs", "api")}, nil
	},
	CorpusRustBook: func(opts Options) ([]string, error) {
		return []string{filepath.Join(opts.DebianDocs, "rust-doc", "html", "book")}, nil
	},
	CorpusZH: func(opts Options) ([]string, error) {
		if opts.ZHDocsDir != "" {
			return []string{opts.ZHDocsDir}, nil
		}
		return zh.WriteTo(filepath.Join(opts.WorkDir, "zhdocs"))
	},
}

func buildCorpus(ctx context.Context, opts Options, name string) (*corpus.Index, error) {
	paths, err := corpusPaths[name](opts)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("quality bench: corpus %s: %w", name, err)
		}
	}
	ix, err := corpus.Open(filepath.Join(opts.WorkDir, "index-"+name))
	if err != nil {
		return nil, err
	}
	st, err := ix.Add(ctx, paths...)
	if err == nil && len(st.Failed) > 0 {
		err = fmt.Errorf("%d files failed, first: %v", len(st.Failed), st.Failed[0])
	}
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("quality bench: index %s: %w", name, err)
	}
	return ix, nil
}

func runQuestion(ctx context.Context, opts Options, ix *corpus.Index, q Question) QuestionResult {
	qr := QuestionResult{ID: q.ID, Corpus: q.Corpus, Question: q.Question, Facts: len(q.Facts), Absent: q.Absent, Twin: q.Twin, Split: q.Split}
	roles := extractive.New(extractive.Config{Searchers: []sources.Searcher{ix}, Log: opts.Log})
	t0 := time.Now()
	rep, err := research.Run(ctx, research.Config{Question: q.Question, Roles: roles, Fetcher: ix,
		OutDir: filepath.Join(opts.WorkDir, "runs", q.ID), RunID: q.ID, Log: opts.Log})
	qr.Seconds = time.Since(t0).Seconds()
	if err != nil {
		qr.Error = err.Error()
		for _, f := range q.Facts {
			qr.Missing = append(qr.Missing, strings.Join(f, " + "))
		}
		return qr
	}
	score(ctx, &qr, q, rep, ix)
	return qr
}

// Score scores a research report for question q against the corpus index the run searched, as Run does: the
// figures of a kept run folder (Options.WorkDir) can be computed again without running it.
func Score(ctx context.Context, q Question, rep *research.Report, ix *corpus.Index) QuestionResult {
	qr := QuestionResult{ID: q.ID, Corpus: q.Corpus, Question: q.Question, Facts: len(q.Facts), Absent: q.Absent, Twin: q.Twin, Split: q.Split}
	score(ctx, &qr, q, rep, ix)
	return qr
}

// Total computes the totals of question results, as Run reports them.
func Total(qrs []QuestionResult) *Result {
	res := &Result{Questions: qrs, GoVersion: runtime.Version(), CPUs: runtime.NumCPU()}
	res.total()
	return res
}

func score(ctx context.Context, qr *QuestionResult, q Question, rep *research.Report, ix *corpus.Index) {
	qr.Language = rep.Language
	qr.Markdown = rep.Markdown
	qr.Found, qr.Missing = FactRecall(rep, q.Facts)
	qr.Leads = LeadsWithFact(rep, q.Facts)
	if len(q.Facts) > 0 {
		qr.Recall = float64(qr.Found) / float64(len(q.Facts))
	}
	qr.Citations, qr.Grounded, qr.Ungrounded = Grounding(ctx, rep, ix)
	if qr.Citations > 0 {
		qr.Grounding = float64(qr.Grounded) / float64(qr.Citations)
	}
	qr.Relevant = RelevantCitations(ctx, rep, ix, q.Relevant)
	if qr.Citations > 0 {
		qr.Precision = float64(qr.Relevant) / float64(qr.Citations)
	}
	qr.Fragments = Fragments(ctx, rep, ix)
	qr.Repeats = Repeats(rep)
	qr.Furniture = Furniture(ctx, rep, ix)
	qr.NotCovered = SaysNotCovered(rep.Markdown, rep.Language)
	qr.AbsentOK = q.Absent && qr.NotCovered && qr.Citations <= 1
}

var (
	citeMarkRE = regexp.MustCompile(`\[\d+(?:\s*,\s*\d+)*\]`)
	spaceRE    = regexp.MustCompile(`\s+`)
)

// FactRecall counts the facts stated by the report: a fact is found when one cited sentence of the report (an
// entry of its citation map) contains every keyword of the fact, ignoring case, citation markers and runs of
// white space. It returns the number found and the facts missing.
func FactRecall(rep *research.Report, facts [][]string) (found int, missing []string) {
	var sentences []string
	for _, c := range rep.CitationMap {
		if len(c.EvidenceIDs) == 0 {
			continue
		}
		s := citeMarkRE.ReplaceAllString(c.Text, " ")
		sentences = append(sentences, norm(s))
	}
	for _, f := range facts {
		ok := false
		for _, s := range sentences {
			if hasAll(s, f) {
				ok = true
				break
			}
		}
		if ok {
			found++
		} else {
			missing = append(missing, strings.Join(f, " + "))
		}
	}
	return found, missing
}

// LeadsWithFact reports whether the report's first cited sentence states one of the facts.
func LeadsWithFact(rep *research.Report, facts [][]string) bool {
	for _, c := range rep.CitationMap {
		if len(c.EvidenceIDs) == 0 {
			continue
		}
		s := norm(citeMarkRE.ReplaceAllString(c.Text, " "))
		return slices.ContainsFunc(facts, func(f []string) bool { return hasAll(s, f) })
	}
	return false
}

func norm(s string) string { return strings.ToLower(spaceRE.ReplaceAllString(s, " ")) }

func hasAll(sentence string, keywords []string) bool {
	for _, k := range keywords {
		any := false
		for _, alt := range strings.Split(k, "|") {
			if alt = norm(strings.TrimSpace(alt)); alt != "" && strings.Contains(sentence, alt) {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	return true
}

var anchorRE = regexp.MustCompile(`#L(\d+)-L(\d+)$`)

// Grounding checks every cited evidence item of the report against the corpus, independently of the run's own
// records: the cited file's text, as the corpus returns it, must contain the quote verbatim — compared as the
// integrity check compares, in publish.NormalizeQuote's form (white space collapsed, comment markers dropped) —
// and a #Lx-Ly anchor must name lines that hold it. It returns the items checked, those grounded, and a
// description of each failure.
func Grounding(ctx context.Context, rep *research.Report, f sources.Fetcher) (checked, grounded int, failures []string) {
	byID := map[string]research.Evidence{}
	for _, e := range rep.Evidence {
		byID[e.ID] = e
	}
	seen := map[string]bool{}
	for _, c := range rep.Citations {
		for _, id := range c.EvidenceIDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			checked++
			e, ok := byID[id]
			if !ok {
				failures = append(failures, fmt.Sprintf("[%d] %s: not in the report's evidence", c.N, id))
				continue
			}
			if err := groundedIn(ctx, f, e); err != nil {
				failures = append(failures, fmt.Sprintf("[%d] %s: %v", c.N, id, err))
				continue
			}
			grounded++
		}
	}
	return checked, grounded, failures
}

func groundedIn(ctx context.Context, f sources.Fetcher, e research.Evidence) error {
	doc, err := f.Fetch(ctx, e.Source)
	if err != nil {
		return err
	}
	if !publish.Grounded(doc.Text, e.Quote) {
		return fmt.Errorf("quote not found verbatim in %s", e.Source)
	}
	m := anchorRE.FindStringSubmatch(e.Source)
	if m == nil {
		return nil
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	lines := strings.Split(doc.Text, "\n")
	if a < 1 || b < a || b > len(lines) || !publish.Grounded(strings.Join(lines[a-1:b], "\n"), e.Quote) {
		return fmt.Errorf("quote is not within lines %d-%d of %s", a, b, e.Source)
	}
	return nil
}

// WriteTable prints the result as an aligned text table with totals, then the language pairs.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tcorpus\tsplit\tlang\tfacts\trecall\tcited\tprecision\tfragments\trepeats\tfurniture\tgrounding\ttime")
	for _, q := range r.Questions {
		status := fmt.Sprintf("%.2fs", q.Seconds)
		if q.Error != "" {
			status = "error: " + q.Error
		}
		facts, recall := fmt.Sprintf("%d/%d", q.Found, q.Facts), fmt.Sprintf("%.0f%%", 100*q.Recall)
		if q.Absent {
			facts, recall = "absent", "ok"
			if !q.AbsentOK {
				recall = "FILLER"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.0f%%\t%d\t%d\t%d\t%.0f%%\t%s\n", q.ID, q.Corpus, q.Split, q.Language, facts, recall,
			q.Citations, 100*q.Precision, len(q.Fragments), len(q.Repeats), len(q.Furniture), 100*q.Grounding, status)
	}
	fmt.Fprintf(tw, "TOTAL (%d questions)\t\t\t\t%d/%d\t%.0f%%\t%d\t%.0f%%\t%d\t%d\t%d\t%.1f%%\t%.2fs\n", len(r.Questions), r.Found, r.Facts,
		100*r.Recall, r.Citations, 100*r.Precision, r.Fragments, r.Repeats, r.Furniture, 100*r.Grounding, r.Seconds)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sp := range r.Splits {
		fmt.Fprintf(w, "split %-8s %2d questions · mean recall %.1f%% · fact recall %.1f%% (%d/%d) · citation precision %.1f%% · furniture %d · fragments %d · leads with a fact %d/%d\n",
			sp.Split, sp.Questions, 100*sp.Recall, 100*sp.FactRecall, sp.Found, sp.Facts, 100*sp.Precision, sp.Furniture, sp.Fragments, sp.Leads, sp.Answerable)
	}
	if len(r.Pairs) > 0 {
		fmt.Fprintln(w, "\nlanguage pairs (the same question asked in Chinese and in English):")
		var zh, en float64
		for _, p := range r.Pairs {
			fmt.Fprintf(w, "  %-22s %4.0f%%   %-22s %4.0f%%\n", p.ID, 100*p.Recall, p.Twin, 100*p.TwinRecall)
			zh += p.Recall
			en += p.TwinRecall
		}
		n := float64(len(r.Pairs))
		fmt.Fprintf(w, "  mean                   %4.0f%%   %-22s %4.0f%%\n", 100*zh/n, "", 100*en/n)
	}
	_, err := fmt.Fprintf(w, "\nmean recall %.1f%% · citation precision %.1f%% · fact recall %.1f%% (%d/%d) · absent answered right %d/%d · "+
		"fragments %d · repeats %d · furniture %d · grounding %.1f%% (%d/%d) · research %.1fs + indexing %.1fs · %s, %d CPUs\n",
		100*r.Recall, 100*r.Precision, 100*r.FactRecall, r.Found, r.Facts, r.AbsentOK, r.Absent, r.Fragments, r.Repeats, r.Furniture,
		100*r.Grounding, r.Grounded, r.Citations, r.Seconds, r.IndexSeconds, r.GoVersion, r.CPUs)
	return err
}

// Err reports a run that must not pass: a question that failed, or a citation that is not grounded.
func (r *Result) Err() error {
	var errs []error
	for _, q := range r.Questions {
		if q.Error != "" {
			errs = append(errs, fmt.Errorf("%s: %s", q.ID, q.Error))
		}
		for _, u := range q.Ungrounded {
			errs = append(errs, fmt.Errorf("%s: ungrounded citation %s", q.ID, u))
		}
	}
	return errors.Join(errs...)
}

func execGoEnv(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	return strings.TrimSpace(string(out)), err
}
