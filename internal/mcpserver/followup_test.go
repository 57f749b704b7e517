package mcpserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/research"
)

// TestFollowUpArgument: deep_research's from names a finished run of this server by its id and the follow-up
// links it; a folder, an unknown id and an unfinished run are refused before any run starts.
func TestFollowUpArgument(t *testing.T) {
	eng := researchtest.New(t, 0)
	var froms []string
	s := idleServer(t, Config{Start: func(ctx context.Context, req RunRequest) (*research.Report, error) {
		froms = append(froms, req.From)
		cfg := eng.Config(req.Question, req.RunID, req.OutDir, req.OnEvent)
		cfg.From = req.From
		return research.Run(ctx, cfg)
	}})
	cs := connectEliciting(t, s, nil)
	src := map[string]any{"corpus": []string{eng.Dir}}
	res := callResearch(t, cs, map[string]any{"question": "What does a channel send synchronize with?", "sources": src}, nil)
	if res.IsError {
		t.Fatal(text(res))
	}
	first := res.StructuredContent.(map[string]any)["run_id"].(string)
	res = callResearch(t, cs, map[string]any{"question": "What does a mutex guarantee?", "sources": src, "from": first}, nil)
	if res.IsError {
		t.Fatal(text(res))
	}
	out := res.StructuredContent.(map[string]any)
	if !strings.Contains(out["report"].(string), "Follows up on run ["+first+"](../"+first+"/report.md)") {
		t.Fatalf("the follow-up does not link %s:\n%s", first, out["report"])
	}
	stopped := filepath.Join(s.cfg.RunsDir, "20260101-000000-57057e")
	ctx, cancel := context.WithCancel(t.Context())
	cfg := eng.Config("Why?", "", stopped, func(e research.Event) {
		if e.Kind == research.EventPlan {
			cancel()
		}
	})
	if _, err := research.Run(ctx, cfg); err == nil {
		t.Fatal("the cancelled run finished")
	}
	n := len(froms)
	for _, tc := range []struct{ from, want string }{
		{filepath.Join(s.cfg.RunsDir, first), "give the id of a run"},
		{"../" + first, "give the id of a run"},
		{"20991231-000000-000000", "there is no run"},
		{filepath.Base(stopped), "only a finished run can be followed up"},
	} {
		res := callResearch(t, cs, map[string]any{"question": "Why?", "sources": src, "from": tc.from}, nil)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("from %q: %q, want a refusal with %q", tc.from, text(res), tc.want)
		}
	}
	if len(froms) != n {
		t.Fatalf("a refused follow-up started a run")
	}
}
