package webui

import (
	"encoding/json"
	"html/template"
	"strings"

	"github.com/deepresearch/deepresearch/lexical"
)

// labels are the interface's own words on a run's pages. A run asked in Chinese gets them in Chinese, so the
// page around a Chinese report does not switch language at every button.
type labels struct {
	Lang                                                                 string
	NewRun, PastRuns, Stop, Run, Engine, Sources, Cited                  string
	Gathered, Spend, CutShort, LiveProgress, RunLog                      string
	Scope, Search, Read, Verify, Synth                                   string
	Round, SubQuestions, Picked, Reads, Evidence, Calls                  string
	Tokens, SubQuestionsH, SourcesH, EvidenceH, LogH                     string
	Stopped, StoppedAgain, Back, Citation, QuoteOf, PrevQuote, NextQuote string
	Source, Anchor, Confidence, SubQuestion, RoundOf                     string
	AtQuote                                                              string
	StoredText, NotFoundVerbatim, TextUnreadable                         string
	// The clarifying questions' form on a run's page, and how they ended.
	ClarifyH, ClarifyIntro, ClarifySend, ClarifySkip string
	ClarifyAnswered, ClarifySkipped, ClarifyLate     string
	FollowUp, FollowUpHint, FollowUpStart            string
	// JS holds the words the live view's script writes.
	JS map[string]string
}

var labelsEN = labels{
	Lang: "en", NewRun: "New run", PastRuns: "Past runs", Stop: "Stop", Run: "Run", Engine: "engine",
	Sources: "sources", Cited: "evidence cited", Gathered: "gathered", Spend: "spend", CutShort: "This run was cut short:",
	LiveProgress: "Live progress", RunLog: "Run log",
	Scope: "Scope", Search: "Search", Read: "Read", Verify: "Verify", Synth: "Synthesize",
	Round: "round", SubQuestions: "sub-questions", Picked: "sources picked", Reads: "passages read", Evidence: "evidence",
	Calls: "calls", Tokens: "tokens",
	SubQuestionsH: "Sub-questions", SourcesH: "Sources", EvidenceH: "Evidence", LogH: "Log",
	Stopped:      "Stopped. The run folder is kept: continue it with",
	StoppedAgain: "Stopped, with nothing here to resume from (it was stopped before it began, or its workflow was cancelled): start the question again from the form.", Back: "←",
	Citation: "Citation", QuoteOf: "quote %d of %d", PrevQuote: "← previous quote", NextQuote: "next quote →",
	Source: "Source", Anchor: "Anchor", Confidence: "Confidence", SubQuestion: "Sub-question", RoundOf: "round",
	AtQuote:  "open the source at the quote",
	FollowUp: "Follow up", FollowUpHint: "A new run that reuses this run's sources and evidence, searches only what they do not cover and links this report.",
	FollowUpStart: "Start the follow-up",
	StoredText:    "Stored source text", NotFoundVerbatim: "The quote was not found verbatim in the stored text; it is shown here as recorded:",
	TextUnreadable: "The stored text of this source could not be read:",
	ClarifyH:       "Before planning: what do you mean?",
	ClarifyIntro:   "The planner finds the question ambiguous and asks. Leave a field empty to keep it open; nothing is searched until you answer or skip, or the time runs out",
	ClarifySend:    "Send answers", ClarifySkip: "Skip: plan without answers",
	ClarifyAnswered: "Your answers to the planner's questions went into the plan.",
	ClarifySkipped:  "The planner's questions were skipped: the run planned without answers.",
	ClarifyLate:     "The planner's questions were not answered in time, so the run went on without answers",
	JS: map[string]string{
		"waiting": "waiting for the plan…", "evidence": "evidence", "read": "read", "cited": "cited",
		"passages": "passages", "picked": "sources picked; reading…", "noSources": "no sources yet",
		"stopped": "stopped", "done": "done", "failed": "failed", "running": "running",
	},
}

var labelsZH = labels{
	Lang: "zh", NewRun: "新建研究", PastRuns: "历史记录", Stop: "停止", Run: "运行", Engine: "引擎",
	Sources: "个来源", Cited: "条证据被引用", Gathered: "收集", Spend: "花费", CutShort: "本次运行提前结束：",
	LiveProgress: "实时进度", RunLog: "运行日志",
	Scope: "规划", Search: "搜索", Read: "阅读", Verify: "核查", Synth: "撰写",
	Round: "轮次", SubQuestions: "子问题", Picked: "候选来源", Reads: "已读段落", Evidence: "证据",
	Calls: "调用", Tokens: "词元",
	SubQuestionsH: "子问题", SourcesH: "来源", EvidenceH: "证据", LogH: "日志",
	Stopped:      "已停止。运行目录已保留，可继续：",
	StoppedAgain: "已停止，此处没有可继续的内容（它在开始前就被停止，或其工作流已取消）：请在表单中重新提交该问题。", Back: "←",
	Citation: "引用", QuoteOf: "第 %d 条，共 %d 条", PrevQuote: "← 上一条", NextQuote: "下一条 →",
	Source: "来源", Anchor: "锚点", Confidence: "置信度", SubQuestion: "子问题", RoundOf: "轮次",
	AtQuote:  "在原文中打开此引文",
	FollowUp: "追问", FollowUpHint: "新建一次运行：沿用本次运行的来源与证据，只检索其未涵盖的内容，并链接本报告。",
	FollowUpStart: "开始追问",
	StoredText:    "保存的来源原文", NotFoundVerbatim: "在保存的原文中未找到逐字匹配的引文，以下为记录的引文：",
	TextUnreadable: "无法读取该来源保存的原文：",
	ClarifyH:       "规划之前：您指的是什么？",
	ClarifyIntro:   "规划器认为问题有歧义，想先问清楚。留空表示不作回答；在您回答、跳过或超时之前不会搜索",
	ClarifySend:    "提交回答", ClarifySkip: "跳过：不回答直接规划",
	ClarifyAnswered: "您的回答已写入研究计划。",
	ClarifySkipped:  "已跳过规划器的问题：本次运行未带回答进行规划。",
	ClarifyLate:     "规划器的问题未在时限内得到回答，运行已在没有回答的情况下继续",
	JS: map[string]string{
		"waiting": "等待研究计划…", "evidence": "条证据", "read": "已读", "cited": "被引用",
		"passages": "段", "picked": "个候选来源，阅读中…", "noSources": "暂无来源",
		"stopped": "已停止", "done": "完成", "failed": "失败", "running": "进行中",
	},
}

// labelsFor picks the interface language of a run: its report's language when known, else its question's.
func labelsFor(language, question string) labels {
	lang := strings.ToLower(language)
	if lang == "" && question != "" {
		lang = strings.ToLower(lexical.Language(question))
	}
	if strings.HasPrefix(lang, "zh") {
		return labelsZH
	}
	return labelsEN
}

// JSON is the script's words as a JSON document for a <script type="application/json"> block.
func (l labels) JSON() template.JS {
	b, _ := json.Marshal(l.JS)
	return template.JS(b)
}
