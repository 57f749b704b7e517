package subagent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
	"github.com/deepresearch/deepresearch/mcptools/mcptest"
	"github.com/deepresearch/deepresearch/subagent"
)

// The "done when": a real reference server (server-filesystem from npm, marked subagent-only) is used by
// a subagent on the parent's behalf; the parent never sees the server's tools or output, only the answer.
func TestSubagentUsesRealMCPServerParentSeesOnlyTheAnswer(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	var b strings.Builder
	for i := range 4000 {
		b.WriteString("inventory line ")
		b.WriteString(strings.Repeat("x", 20))
		if i == 2718 {
			b.WriteString(" SERIAL=ZX-81")
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "inventory.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := mcptest.Filesystem(t, dir)
	fs.SubagentOnly = true
	mgr := mcptools.Start(t.Context(), &mcptools.File{Servers: map[string]mcptools.ServerConfig{"fs": fs}}, mcptools.Options{InitTimeout: 60 * time.Second})
	defer mgr.Close()
	if f := mgr.Failures(); len(f) != 0 {
		t.Fatalf("failures: %v", f)
	}
	if len(mgr.Tools()) != 0 || len(mgr.SubagentTools()) == 0 {
		t.Fatalf("subagent-only server leaked to the main agent: %d main, %d subagent tools", len(mgr.Tools()), len(mgr.SubagentTools()))
	}

	const answer = "The serial number in inventory.txt is ZX-81 (line 2719)."
	readArgs, _ := json.Marshal(map[string]string{"path": filepath.Join(dir, "inventory.txt")})
	var subToolOutput string
	model := scripted.New(llm.Info{ContextWindow: 200_000}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if isParent(req) {
			if slices.ContainsFunc(req.Tools, func(s llm.ToolSpec) bool { return mcptools.IsMCPName(s.Name) }) {
				t.Error("the parent was offered MCP tools")
			}
			if countTools(req) == 0 {
				return scripted.Reply("", taskCall("Find the serial number in inventory.txt ("+dir+") and report it.", subagent.GeneralPurpose)), nil
			}
			return scripted.Reply("Serial: " + lastTool(req).Content), nil
		}
		if countTools(req) == 0 {
			return scripted.Reply("", llm.ToolCall{Name: "mcp__fs__read_text_file", Arguments: string(readArgs)}), nil
		}
		subToolOutput = lastTool(req).Content
		return scripted.Reply(answer), nil
	}, scripted.WithRecording())

	lazy := mcptools.NewLazy(mcptools.LazyConfig{})
	guard := mcptools.NewGuard(mcptools.GuardConfig{Timeouts: map[string]time.Duration{subagent.ToolName: mcptools.NoTimeout}})
	fleet, err := subagent.New(subagent.Config{
		Model:         model,
		Tools:         []agent.Tool{lazy.Tool()},
		SubagentTools: mgr.SubagentTools(),
		Middleware:    func(string, subagent.Type) []agent.Middleware { return []agent.Middleware{guard, lazy} },
	})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := agent.New(agent.Config{Model: model, System: parentSystem, Tools: []agent.Tool{lazy.Tool(), fleet.Tool()}, Middleware: []agent.Middleware{guard, lazy}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := parent.Run(t.Context(), "What is the serial number?")
	if err != nil || out != "Serial: "+answer {
		t.Fatalf("Run = %q, %v", out, err)
	}
	if !strings.Contains(subToolOutput, "SERIAL=ZX-81") || len(subToolOutput) < 100_000 {
		t.Fatalf("the subagent did not read the file through the server (%d chars)", len(subToolOutput))
	}
	var reqs []*llm.Request
	for _, r := range model.Requests() {
		if isParent(r) {
			reqs = append(reqs, r)
			if strings.Contains(fmtMessages(r.Messages), "inventory line") {
				t.Fatal("raw MCP output reached the parent's context")
			}
		}
	}
	c := tokens.Approx{}
	added := reqs[1].Messages[len(reqs[0].Messages):]
	grew := tokens.CountMessages(c, reqs[1].Messages) - tokens.CountMessages(c, reqs[0].Messages)
	if len(added) != 2 || added[1].Content != answer || grew != tokens.CountMessages(c, added) {
		t.Fatalf("parent grew by %d tokens with %+v", grew, added)
	}
	if sub := c.Count(subToolOutput); grew*20 > sub {
		t.Fatalf("parent grew by %d tokens; the subagent's MCP output alone was %d", grew, sub)
	}
}

func fmtMessages(ms []llm.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}
