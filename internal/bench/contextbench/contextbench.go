package contextbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/contextmgr"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/workspace"
)

// The heavy-MCP-traffic scenario: 20 MCP-style calls of about 40,000 characters each, mostly irrelevant, on a
// 128K-token model; and the same calls beside 300 deferred MCP tools in a 128K and a 32K window.
const (
	Calls            = 20
	ResultChars      = 40_000
	Window           = 128_000
	SmallWindow      = 32_768
	MCPToolCount     = 300
	benchFactsPerRun = 3
	benchSeed        = 2_024
)

// Case is one setting of the scenario: the model's window and how many MCP tools sit beside search_docs.
type Case struct {
	Window   int `json:"window"`
	MCPTools int `json:"mcp_tools"`
}

// Cases are the default cases: the plain scenario, then the MCP-heavy one in both windows.
func Cases() []Case {
	return []Case{{Window, 0}, {Window, MCPToolCount}, {SmallWindow, MCPToolCount}}
}

// Row is one preset's figures in one case.
type Row struct {
	Preset            string  `json:"preset"`
	Window            int     `json:"window"`
	MCPTools          int     `json:"mcp_tools"`
	BilledInputTokens int     `json:"billed_input_tokens"`
	PeakPromptTokens  int     `json:"peak_prompt_tokens"`
	Compactions       int     `json:"compactions"`
	SummaryCalls      int     `json:"summary_calls"`
	ResultsSeen       float64 `json:"results_seen"`
	RecoverableShare  float64 `json:"recoverable_share"`
	FactRecall        float64 `json:"fact_recall"`
	// OverReserve counts model calls whose prompt (the Account the manager measured) exceeded the window minus
	// the output reserve; it must be 0.
	OverReserve int `json:"over_reserve"`
}

// Options configures Run.
type Options struct {
	// Dir holds one workspace per case and preset; default a temporary directory that is removed afterwards.
	Dir string
	// Presets to run; default deepagents, claude-code, hybrid.
	Presets []string
	// Cases to run; default Cases().
	Cases []Case
}

// benchTask is one call's planted facts and the result carrying them.
type benchTask struct {
	query  string
	facts  []string
	result string
}

var benchSubjects = []string{
	"payments gateway", "ledger service", "search indexer", "image resizer", "session store",
	"email relay", "billing scheduler", "audit pipeline", "feature flags", "metrics collector",
	"auth proxy", "upload broker", "report builder", "geo resolver", "notification hub",
	"cache warmer", "invoice renderer", "fraud scorer", "backup agent", "config registry",
	"payments ledger", "search gateway", "session broker", "metrics relay",
}

// benchAttrs are the settings documents talk about, each with how its value reads.
var benchAttrs = []struct {
	name  string
	value func(r *rand.Rand) string
}{
	{"retry limit", func(r *rand.Rand) string { return fmt.Sprintf("%d attempts", 2+r.IntN(9)) }},
	{"request timeout", func(r *rand.Rand) string { return fmt.Sprintf("%d seconds", 5+r.IntN(115)) }},
	{"rate limit", func(r *rand.Rand) string { return fmt.Sprintf("%d requests per minute", 100*(1+r.IntN(90))) }},
	{"replica count", func(r *rand.Rand) string { return fmt.Sprintf("%d replicas", 2+r.IntN(30)) }},
	{"cache size", func(r *rand.Rand) string { return fmt.Sprintf("%d megabytes", 64*(1+r.IntN(64))) }},
	{"log retention", func(r *rand.Rand) string { return fmt.Sprintf("%d days", 7+r.IntN(358)) }},
	{"batch window", func(r *rand.Rand) string { return fmt.Sprintf("%02d:%02d UTC", r.IntN(24), 5*r.IntN(12)) }},
	{"queue depth", func(r *rand.Rand) string { return fmt.Sprintf("%d messages", 500*(1+r.IntN(200))) }},
	{"heap ceiling", func(r *rand.Rand) string { return fmt.Sprintf("%d megabytes", 256*(1+r.IntN(32))) }},
	{"shard count", func(r *rand.Rand) string { return fmt.Sprintf("%d shards", 1+r.IntN(128)) }},
	{"health check interval", func(r *rand.Rand) string { return fmt.Sprintf("%d seconds", 1+r.IntN(60)) }},
	{"connection pool", func(r *rand.Rand) string { return fmt.Sprintf("%d connections", 4+r.IntN(252)) }},
	{"deploy region", func(r *rand.Rand) string {
		return []string{"eu-west", "eu-central", "us-east", "us-west", "ap-south", "ap-northeast"}[r.IntN(6)] + fmt.Sprintf("-%d", 1+r.IntN(3))
	}},
	{"error budget", func(r *rand.Rand) string { return fmt.Sprintf("%d.%d percent", r.IntN(5), r.IntN(10)) }},
	{"backoff base", func(r *rand.Rand) string { return fmt.Sprintf("%d milliseconds", 50*(1+r.IntN(40))) }},
	{"snapshot cadence", func(r *rand.Rand) string { return fmt.Sprintf("every %d hours", 1+r.IntN(48)) }},
	{"certificate lifetime", func(r *rand.Rand) string { return fmt.Sprintf("%d days", 30+r.IntN(700)) }},
	{"worker threads", func(r *rand.Rand) string { return fmt.Sprintf("%d threads", 2+r.IntN(126)) }},
	{"payload limit", func(r *rand.Rand) string { return fmt.Sprintf("%d kilobytes", 16*(1+r.IntN(256))) }},
	{"oncall rotation", func(r *rand.Rand) string {
		return "team " + []string{"Atlas", "Borealis", "Cobalt", "Dune", "Ember", "Fjord", "Granite", "Harbor"}[r.IntN(8)]
	}},
}

// Fact sentences and setting-like filler share these templates, so a planted fact looks like everything around
// it; only its relevance to the query tells it apart.
var benchSettingTemplates = []string{
	"The %[2]s of the %[1]s is %[3]s.",
	"For the %[1]s, the %[2]s was set to %[3]s after the last capacity review.",
	"Operators changed the %[1]s %[2]s to %[3]s in release %[4]s.",
	"According to runbook %[4]s, the %[1]s keeps its %[2]s at %[3]s.",
	"The %[1]s now runs with a %[2]s of %[3]s, as agreed in design note %[4]s.",
}

var benchOtherTemplates = []string{
	"The %[1]s team reviewed its dashboards on %[2]s and filed ticket %[3]s about flaky alerts.",
	"Release %[3]s of the %[1]s shipped on %[2]s with minor fixes to logging and metrics labels.",
	"A postmortem for the %[1]s incident of %[2]s lists follow-up %[3]s as still open.",
	"The %[1]s depends on the shared message bus and the internal certificate authority since %[2]s.",
	"Load tests of the %[1]s on %[2]s showed no regression against baseline %[3]s.",
	"Documentation for the %[1]s moved to the new portal on %[2]s; the old wiki page %[3]s redirects there.",
}

func benchDate(r *rand.Rand) string {
	return fmt.Sprintf("2025-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))
}

func benchRef(r *rand.Rand) string {
	return fmt.Sprintf("%s-%d", []string{"OPS", "REL", "DN", "RB", "INC"}[r.IntN(5)], 100+r.IntN(9900))
}

// benchTasks generates the 20 calls' queries, planted facts and 40,000-character results, deterministically.
func benchTasks() []benchTask {
	r := rand.New(rand.NewPCG(benchSeed, 7))
	type pair struct{ s, a int }
	asked := map[pair]bool{}
	tasks := make([]benchTask, Calls)
	attrsOf := make([][]int, Calls)
	for k := range tasks {
		perm := r.Perm(len(benchAttrs))[:benchFactsPerRun]
		attrsOf[k] = perm
		for _, a := range perm {
			asked[pair{k, a}] = true
		}
	}
	setting := func(s, a int) string {
		t := benchSettingTemplates[r.IntN(len(benchSettingTemplates))]
		return fmt.Sprintf(t, benchSubjects[s], benchAttrs[a].name, benchAttrs[a].value(r), benchRef(r))
	}
	for k := range tasks {
		var names []string
		for _, a := range attrsOf[k] {
			names = append(names, benchAttrs[a].name)
		}
		tasks[k].query = fmt.Sprintf("%s %s, %s and %s", benchSubjects[k], names[0], names[1], names[2])
		for _, a := range attrsOf[k] {
			tasks[k].facts = append(tasks[k].facts, setting(k, a))
		}
		// Filler: settings and notes about every other subject (including the other attributes asked here, and
		// a few mentions of this call's subject with attributes not asked), never a pair any call asks about.
		var lines []string
		size := 0
		for size < ResultChars {
			var sents []string
			for range 3 + r.IntN(3) {
				s := r.IntN(len(benchSubjects))
				if s == k && r.IntN(4) != 0 {
					s = (s + 1 + r.IntN(len(benchSubjects)-1)) % len(benchSubjects)
				}
				if r.IntN(3) == 0 {
					t := benchOtherTemplates[r.IntN(len(benchOtherTemplates))]
					sents = append(sents, fmt.Sprintf(t, benchSubjects[s], benchDate(r), benchRef(r)))
					continue
				}
				a := r.IntN(len(benchAttrs))
				for asked[pair{s, a}] {
					a = (a + 1) % len(benchAttrs)
				}
				sents = append(sents, setting(s, a))
			}
			line := strings.Join(sents, " ")
			lines = append(lines, line)
			size += len(line) + 1
		}
		// Plant each fact inside a different line, away from the ends (where previews look).
		spots := r.Perm(len(lines) - 10)[:benchFactsPerRun]
		for i, f := range tasks[k].facts {
			li := spots[i] + 5
			sents := strings.SplitAfter(lines[li], ". ")
			at := r.IntN(len(sents) + 1)
			sents = append(sents[:at], append([]string{f + " "}, sents[at:]...)...)
			lines[li] = strings.TrimSpace(strings.Join(sents, ""))
		}
		tasks[k].result = strings.Join(lines, "\n") + "\n"
	}
	return tasks
}

const benchRequest = "Audit the platform configuration: for each service I name, search the internal documentation for the settings I ask about and report their exact values in a table."

type benchSearchInput struct {
	Query string `json:"query" jsonschema:"what to look for"`
}

// MCPTools generates n MCP tools with ordinary descriptions and schemas, spread over five servers. They are
// never called.
func MCPTools(n int) []agent.Tool {
	servers := []string{"github", "jira", "postgres", "slack", "drive"}
	verbs := []string{"list", "get", "create", "update", "delete", "search", "archive", "export"}
	nouns := []string{"issues", "pull_requests", "comments", "labels", "projects", "users", "teams", "tables",
		"rows", "channels", "messages", "files", "folders", "permissions", "webhooks", "releases", "milestones", "reports"}
	out := make([]agent.Tool, 0, n)
	for i := range n {
		srv, verb, noun := servers[i%len(servers)], verbs[(i/len(servers))%len(verbs)], nouns[(i/(len(servers)*len(verbs)))%len(nouns)]
		name := fmt.Sprintf("mcp__%s__%s_%s", srv, verb, noun)
		if i >= len(servers)*len(verbs)*len(nouns) {
			name += fmt.Sprint("_", i)
		}
		desc := fmt.Sprintf("%s %s in the connected %s account. Supports pagination with a cursor, filtering by owner, "+
			"state and date range, and sorting by creation or update time. Returns a JSON array of objects with their "+
			"identifiers, titles, owners, timestamps and URLs. Requires the %s scope; rate limited to 60 calls a minute.",
			strings.ToUpper(verb[:1])+verb[1:], strings.ReplaceAll(noun, "_", " "), srv, noun+":read")
		schema := fmt.Sprintf(`{"type":"object","properties":{"owner":{"type":"string","description":"owner or organisation of the %[1]s"},`+
			`"state":{"type":"string","enum":["open","closed","all"],"description":"which %[1]s to include"},`+
			`"since":{"type":"string","format":"date-time","description":"only %[1]s changed after this time"},`+
			`"cursor":{"type":"string","description":"pagination cursor from the previous page"},`+
			`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"page size, default 30"}},"required":["owner"]}`, strings.ReplaceAll(noun, "_", " "))
		out = append(out, benchStub{spec: llm.ToolSpec{Name: name, Description: desc, Schema: json.RawMessage(schema)}})
	}
	return out
}

type benchStub struct{ spec llm.ToolSpec }

func (b benchStub) Spec() llm.ToolSpec { return b.spec }
func (b benchStub) Run(context.Context, json.RawMessage) (agent.Result, error) {
	return agent.ErrorResult("%s is not available in the benchmark", b.spec.Name), nil
}

// Run runs the 20-call task once per case and preset and returns one row each.
func Run(ctx context.Context, o Options) ([]Row, error) {
	presets := o.Presets
	if len(presets) == 0 {
		presets = contextmgr.Presets()
	}
	cases := o.Cases
	if len(cases) == 0 {
		cases = Cases()
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "contextbench-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	tasks := benchTasks()
	var rows []Row
	for _, bc := range cases {
		for _, p := range presets {
			row, err := runBenchPreset(ctx, filepath.Join(dir, fmt.Sprintf("w%d-t%d-%s", bc.Window, bc.MCPTools, p)), p, bc, tasks)
			if err != nil {
				return nil, fmt.Errorf("bench %s (window %d, %d MCP tools): %w", p, bc.Window, bc.MCPTools, err)
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func runBenchPreset(ctx context.Context, dir, preset string, bc Case, tasks []benchTask) (Row, error) {
	ws, err := workspace.New(dir, workspace.Config{})
	if err != nil {
		return Row{}, err
	}
	cfg, err := contextmgr.Preset(preset)
	if err != nil {
		return Row{}, err
	}
	cfg.NoMemory, cfg.NoProjectMemory = true, true
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Window = bc.Window
	mgr, err := contextmgr.New(ws, cfg)
	if err != nil {
		return Row{}, err
	}

	byQuery := map[string]int{}
	for k, t := range tasks {
		byQuery[t.query] = k
	}
	search := agent.NewTool("search_docs", "Search the internal documentation (an MCP server); returns the matching pages.",
		func(_ context.Context, in benchSearchInput) (string, error) {
			k, ok := byQuery[in.Query]
			if !ok {
				return "", fmt.Errorf("no documents for %q", in.Query)
			}
			return tasks[k].result, nil
		})

	tools := []agent.Tool{search}
	var mws []agent.Middleware
	if bc.MCPTools > 0 {
		lazy := mcptools.NewLazy(mcptools.LazyConfig{})
		mws = append(mws, lazy)
		tools = append(append(tools, lazy.Tool()), MCPTools(bc.MCPTools)...)
	}
	mws = append(mws, mgr)

	// The script: call the tool once per service with a query naming what it looks for, then answer. At each
	// call it notes whether the result it just received stands in its prompt (whole, or an excerpt naming the
	// file that holds it whole) and which of its planted facts do.
	var mu sync.Mutex
	var st *agent.State
	mainCalls, seen, planted, resultsSeen, overReserve := 0, 0, 0, 0, 0
	fn := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Tools) == 0 && len(req.Messages) > 0 && req.Messages[0].Content == contextmgr.SummarizerPrompt {
			return scripted.Reply("SESSION INTENT\n" + benchRequest + "\n\nSUMMARY\nSearched the documentation service by service and noted the requested settings.\n\nARTIFACTS\nNone\n\nNEXT STEPS\nContinue with the remaining services, then report the table."), nil
		}
		mu.Lock()
		defer mu.Unlock()
		k := mainCalls
		mainCalls++
		if r := mgr.Report(st); r.Total > r.Window-r.Reserve {
			overReserve++
		}
		if k > 0 && k <= len(tasks) {
			id := fmt.Sprintf("call_%02d", k)
			for _, msg := range req.Messages {
				if msg.ToolCallID != id {
					continue
				}
				if msg.Content == tasks[k-1].result {
					resultsSeen++
				} else if p := contextmgr.FullTextPath(msg); p != "" && strings.Contains(msg.Content, p) {
					if data, err := ws.ReadFile(p); err == nil && string(data) == tasks[k-1].result {
						resultsSeen++
					}
				}
			}
			var prompt strings.Builder
			for _, msg := range req.Messages {
				prompt.WriteString(msg.Content)
				prompt.WriteString("\n")
			}
			for _, f := range tasks[k-1].facts {
				planted++
				if strings.Contains(prompt.String(), f) {
					seen++
				}
			}
		}
		if k < len(tasks) {
			args, _ := json.Marshal(benchSearchInput{Query: tasks[k].query})
			return scripted.Reply("", llm.ToolCall{ID: fmt.Sprintf("call_%02d", k+1), Name: "search_docs", Arguments: string(args)}), nil
		}
		return scripted.Reply("Here is the configuration table."), nil
	}
	ledger := &llm.Ledger{}
	model := llm.Metered(scripted.New(llm.Info{Name: "scripted", ContextWindow: bc.Window}, fn), ledger, "bench")
	ag, err := agent.New(agent.Config{
		Model:      model,
		System:     "You are a research agent. Use search_docs to look things up; results may be long.",
		Tools:      tools,
		Middleware: mws,
		SessionID:  "bench-" + preset,
	})
	if err != nil {
		return Row{}, err
	}
	st = ag.State()
	if _, err := ag.Run(ctx, benchRequest); err != nil {
		return Row{}, err
	}

	row := Row{Preset: preset, Window: bc.Window, MCPTools: bc.MCPTools, OverReserve: overReserve,
		ResultsSeen: float64(resultsSeen) / float64(len(tasks))}
	for _, e := range ledger.Entries() {
		row.BilledInputTokens += e.Usage.InputTokens
		row.PeakPromptTokens = max(row.PeakPromptTokens, e.Usage.InputTokens)
	}
	stats := mgr.Stats()
	row.Compactions, row.SummaryCalls = stats.Compactions, stats.SummaryCalls
	var disk strings.Builder
	err = filepath.WalkDir(ws.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		disk.Write(data)
		return err
	})
	if err != nil {
		return Row{}, err
	}
	total, recoverable := 0, 0
	for _, t := range tasks {
		total += len(t.result)
		if strings.Contains(disk.String(), t.result) {
			recoverable += len(t.result)
		}
	}
	row.RecoverableShare = float64(recoverable) / float64(total)
	if planted > 0 {
		row.FactRecall = float64(seen) / float64(planted)
	}
	return row, nil
}

// FormatTable renders rows as a Markdown table with the hybrid preset's ratios below it, per case.
func FormatTable(rows []Row) string {
	var b strings.Builder
	b.WriteString("| window | MCP tools | preset | billed input tokens | peak prompt tokens | compactions | summary calls | results seen | recoverable share | fact recall |\n")
	b.WriteString("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	type key struct{ w, t int }
	by := map[key]map[string]Row{}
	var order []key
	for _, r := range rows {
		k := key{r.Window, r.MCPTools}
		if by[k] == nil {
			by[k] = map[string]Row{}
			order = append(order, k)
		}
		by[k][r.Preset] = r
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d | %d | %.2f | %.2f | %.2f |\n", lexical.Thousands(r.Window), r.MCPTools, r.Preset,
			lexical.Thousands(r.BilledInputTokens), lexical.Thousands(r.PeakPromptTokens), r.Compactions, r.SummaryCalls, r.ResultsSeen,
			r.RecoverableShare, r.FactRecall)
	}
	for _, k := range order {
		h, ok := by[k][contextmgr.PresetHybrid]
		if !ok {
			continue
		}
		var parts []string
		for _, other := range []string{contextmgr.PresetDeepAgents, contextmgr.PresetClaudeCode} {
			if o, ok := by[k][other]; ok && o.BilledInputTokens > 0 {
				parts = append(parts, fmt.Sprintf("%.1f%% of %s", 100*float64(h.BilledInputTokens)/float64(o.BilledInputTokens), other))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "\nwindow %s, %d MCP tools: hybrid bills %s.", lexical.Thousands(k.w), k.t, strings.Join(parts, " and "))
		}
	}
	b.WriteString("\n")
	return b.String()
}
