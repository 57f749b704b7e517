package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/mcptools"
)

// defaultListingWindow is assumed when no model is configured.
const defaultListingWindow = 128_000

// listingModel stands in for the agent's model when none is configured: the tools listing needs a window and a
// tokenizer, never an answer.
type listingModel struct{ info llm.Info }

func (m listingModel) Info() llm.Info { return m.info }
func (m listingModel) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("no model configured")
}

// toolRow is one tool of the listing.
type toolRow struct {
	Name         string `json:"name"`
	Group        string `json:"group"` // "built-in" or the MCP server's name
	Tokens       int    `json:"tokens"`
	Deferred     bool   `json:"deferred,omitempty"`
	SubagentOnly bool   `json:"subagent_only,omitempty"`
	Description  string `json:"description"`
}

type failedServer struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

type toolsListing struct {
	Model        string         `json:"model"`
	Window       int            `json:"window"`
	MCPFile      string         `json:"mcp_file,omitempty"`
	SchemaTokens int            `json:"schema_tokens"`
	Threshold    int            `json:"threshold"`
	Deferred     int            `json:"deferred"`
	SavedTokens  int            `json:"saved_tokens"`
	Tools        []toolRow      `json:"tools"`
	Failed       []failedServer `json:"failed_servers,omitempty"`
}

func newToolsCmd(app *App) *cobra.Command {
	var mcpFile, dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [--mcp FILE]",
		Short: "List every tool the agent sees, with the tokens each schema costs and whether it is deferred",
		Long: `List every tool an agent (ask, chat) would be given: the built-in file, memory, tool_search and task
tools, then each MCP server's tools, with the tokens their schemas cost. When all schemas together exceed 10% of
the model's window, MCP tools are deferred behind tool_search and marked so. Tools of servers marked
"subagentOnly" are listed but reach subagents only. MCP servers that failed to start are listed with the reason.

The MCP servers come from --mcp FILE, else mcp_file in the configuration, else ./.mcp.json in a trusted folder (see deepresearch trust).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if mcpFile != "" {
				app.Config.MCPFile = mcpFile
			}
			// The text listing shows failed servers itself; with --json a person watching stderr still hears of them.
			l, err := app.listTools(cmd.Context(), dir, !asJSON)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(app.Stdout, l)
			}
			l.print(app.Stdout)
			return nil
		},
	}
	cmd.Flags().StringVar(&mcpFile, "mcp", "", "a .mcp.json file (default: mcp_file from the configuration, else ./.mcp.json in a trusted folder)")
	cmd.Flags().StringVar(&dir, "workspace", "", "workspace directory (default: the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the listing as JSON")
	return cmd
}

func (a *App) listTools(ctx context.Context, dir string, listsFailures bool) (*toolsListing, error) {
	var model llm.Model = listingModel{info: llm.Info{Name: "(no model configured)", ContextWindow: defaultListingWindow}}
	if a.Config.HasModel() {
		// The listing needs the window and the tokenizer, never an answer, so no API key is required.
		spec := a.Config.ModelFor("agent")
		e := a.Config.Describe(spec)
		model = listingModel{info: e.Info}
	}
	info := model.Info()
	if info.ContextWindow <= 0 {
		info.ContextWindow = defaultListingWindow
	}
	ws, err := openWorkspace(dir)
	if err != nil {
		return nil, err
	}
	rt, err := a.newRuntime(ctx, runtimeOptions{Model: model, Workspace: ws, Ledger: &llm.Ledger{}, ListsFailures: listsFailures})
	if err != nil {
		return nil, err
	}
	defer rt.Close()

	counter := tokens.ForModel(info.Name)
	l := &toolsListing{Model: info.Name, Window: info.ContextWindow}
	specs := make([]llm.ToolSpec, len(rt.Tools))
	for i, t := range rt.Tools {
		specs[i] = t.Spec()
	}
	mgr := rt.MCP()
	plan := mcptools.NewLazy(mcptools.LazyConfig{Counter: counter}).Plan(specs, info.ContextWindow, nil)
	if mgr != nil {
		l.MCPFile, _ = a.mcpFile()
	}
	deferred := map[string]bool{}
	for _, n := range plan.Deferred {
		deferred[n] = true
	}
	l.SchemaTokens, l.Threshold, l.Deferred, l.SavedTokens = plan.TotalTokens, plan.Threshold, len(plan.Deferred), plan.Saving()
	row := func(t agent.Tool, subOnly bool) toolRow {
		s := t.Spec()
		r := toolRow{Name: s.Name, Group: "built-in", Tokens: tokens.CountTools(counter, []llm.ToolSpec{s}), Deferred: deferred[s.Name],
			SubagentOnly: subOnly, Description: mcptools.OneLine(s.Description, 100)}
		if mt, ok := t.(*mcptools.Tool); ok {
			r.Group = mt.Server()
		}
		return r
	}
	for _, t := range rt.Tools {
		l.Tools = append(l.Tools, row(t, false))
	}
	if mgr != nil {
		for _, t := range mgr.SubagentTools() {
			l.Tools = append(l.Tools, row(t, true))
		}
		for _, f := range mgr.Failures() {
			l.Failed = append(l.Failed, failedServer{Server: f.Server, Error: strings.TrimPrefix(f.Err.Error(), "mcp server "+f.Server+": ")})
		}
	}
	if l.SchemaTokens == 0 {
		for _, r := range l.Tools {
			if !r.SubagentOnly && r.Name != mcptools.SearchToolName {
				l.SchemaTokens += r.Tokens
			}
		}
	}
	return l, nil
}

func (l *toolsListing) print(w io.Writer) {
	fmt.Fprintf(w, "Model: %s, window %s tokens\n", l.Model, lexical.Thousands(l.Window))
	if l.MCPFile != "" {
		fmt.Fprintf(w, "MCP servers from %s\n", l.MCPFile)
	}
	share := 100 * float64(l.SchemaTokens) / float64(max(l.Window, 1))
	fmt.Fprintf(w, "Tool schemas: %s tokens, %.1f%% of the window", lexical.Thousands(l.SchemaTokens), share)
	if l.Deferred > 0 {
		fmt.Fprintf(w, " — over the 10%% threshold (%s tokens): %d MCP tools deferred behind tool_search, saving %s tokens per call\n",
			lexical.Thousands(l.Threshold), l.Deferred, lexical.Thousands(l.SavedTokens))
	} else {
		fmt.Fprintf(w, " — all schemas are sent (tool_search is hidden)\n")
	}
	groups := map[string][]toolRow{}
	var order []string
	for _, r := range l.Tools {
		key := r.Group
		if key != "built-in" {
			key = "mcp:" + key
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], r)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i] == "built-in" && order[j] != "built-in" })
	// Columns as wide as their longest entry, so short built-in names do not sit in a sea of blanks.
	nameW, tokW, statusW := 0, 0, 0
	for _, r := range l.Tools {
		nameW = max(nameW, len(r.Name))
		tokW = max(tokW, len(lexical.Thousands(r.Tokens)))
		statusW = max(statusW, len(l.status(r)))
	}
	for _, key := range order {
		rows := groups[key]
		total := 0
		for _, r := range rows {
			total += r.Tokens
		}
		if key == "built-in" {
			fmt.Fprintf(w, "\nbuilt-in (%d tools, %s tokens)\n", len(rows), lexical.Thousands(total))
		} else {
			note := ""
			if rows[0].SubagentOnly {
				note = ", subagents only"
			}
			fmt.Fprintf(w, "\nmcp server %s (%d tools, %s tokens%s)\n", strings.TrimPrefix(key, "mcp:"), len(rows), lexical.Thousands(total), note)
		}
		for _, r := range rows {
			line := fmt.Sprintf("  %-*s  %*s tokens  ", nameW, r.Name, tokW, lexical.Thousands(r.Tokens))
			if statusW > 0 {
				line += fmt.Sprintf("%-*s  ", statusW, l.status(r))
			}
			fmt.Fprintln(w, line+r.Description)
		}
	}
	if len(l.Failed) > 0 {
		fmt.Fprintf(w, "\nfailed MCP servers\n")
		for _, f := range l.Failed {
			fmt.Fprintf(w, "  %s: %s\n", f.Server, strings.ReplaceAll(f.Error, "\n", "\n    "))
		}
	}
}

// status is the listing's note on a tool: who sees it, or why the model does not.
func (l *toolsListing) status(r toolRow) string {
	switch {
	case r.SubagentOnly:
		return "subagents only"
	case r.Deferred:
		return "deferred"
	case r.Name == mcptools.SearchToolName && l.Deferred == 0:
		return "hidden"
	}
	return ""
}
