package subagent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/subagent"
)

func TestParseMarkdown(t *testing.T) {
	md := "---\r\nname: code-reviewer\r\ndescription: Reviews a change for bugs\r\ntools: read_file, grep, mcp__github__*\r\nmodel: fast\r\nmax_steps: 12\r\ncontext:\r\n  compact_at: 0.7\r\nschema:\r\n  type: object\r\n  required: [verdict]\r\n  properties:\r\n    verdict: {type: string}\r\n---\r\nYou are a meticulous reviewer.\r\n\r\nCheck every line.\r\n"
	typ, err := subagent.ParseMarkdown([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if typ.Name != "code-reviewer" || typ.Model != "fast" || typ.MaxSteps != 12 || typ.Prompt != "You are a meticulous reviewer.\n\nCheck every line." {
		t.Fatalf("type = %+v", typ)
	}
	if !slices.Equal(typ.Tools, []string{"read_file", "grep", "mcp__github__*"}) || typ.Context["compact_at"] != 0.7 {
		t.Fatalf("tools %v, context %v", typ.Tools, typ.Context)
	}
	var schema map[string]any
	if err := json.Unmarshal(typ.Schema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("schema = %s (%v)", typ.Schema, err)
	}
	listForm := "---\nname: lister\ndescription: d\ntools:\n  - ls\n  - glob\n---\n"
	if typ, err := subagent.ParseMarkdown([]byte(listForm)); err != nil || !slices.Equal(typ.Tools, []string{"ls", "glob"}) || typ.Prompt != "" {
		t.Fatalf("list form = %+v, %v", typ, err)
	}
}

func TestParseMarkdownErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no front matter", "# Just markdown", "no YAML front matter"},
		{"unclosed", "---\nname: x\ndescription: y\n", "not closed"},
		{"unknown key", "---\nname: x\ndescription: y\ncolour: red\n---\nbody", "colour"},
		{"no name", "---\ndescription: y\n---\nbody", "no name"},
		{"bad name", "---\nname: bad name!\ndescription: y\n---\n", "names may hold"},
		{"no description", "---\nname: x\n---\n", "no description"},
		{"bad pattern", "---\nname: x\ndescription: y\ntools: \"[\"\n---\n", "tool pattern"},
		{"bad schema", "---\nname: x\ndescription: y\nschema: {type: 12}\n---\n", "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := subagent.ParseMarkdown([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadDirAndOverride(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"researcher.md":      "---\nname: researcher\ndescription: Researches a question on the web\nmodel: mid\n---\nResearch carefully.",
		"general-purpose.md": "---\nname: general-purpose\ndescription: Our own general agent\n---\nHouse style.",
		"notes.txt":          "ignored",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	types, err := subagent.LoadDir(dir)
	if err != nil || len(types) != 2 || types[0].Name != "general-purpose" || types[1].Source != filepath.Join(dir, "researcher.md") {
		t.Fatalf("LoadDir = %+v, %v", types, err)
	}
	if none, err := subagent.LoadDir(filepath.Join(dir, "missing")); err != nil || none != nil {
		t.Fatalf("missing dir = %v, %v", none, err)
	}
	bad := t.TempDir()
	_ = os.WriteFile(filepath.Join(bad, "x.md"), []byte("no front matter"), 0o644)
	if _, err := subagent.LoadDir(bad); err == nil || !strings.Contains(err.Error(), "x.md") {
		t.Fatalf("a bad file must be an error naming it: %v", err)
	}
	// A configured general-purpose type replaces the built-in one.
	fleet, err := subagent.New(subagent.Config{Model: nopModel(), Types: types})
	if err != nil {
		t.Fatal(err)
	}
	got := fleet.Types()
	if len(got) != 2 || got[0].Description != "Our own general agent" || got[1].Name != "researcher" {
		t.Fatalf("types = %+v", got)
	}
	if _, err := subagent.New(subagent.Config{Model: nopModel(), Types: []subagent.Type{{Name: "x"}}}); err == nil {
		t.Fatal("an invalid configured type must be an error")
	}
	if _, err := subagent.New(subagent.Config{}); err == nil {
		t.Fatal("a fleet without a model must be an error")
	}
}

func nopModel() *scripted.Model { return scripted.New(llm.Info{}, scripted.Sequence()) }

// Types can also come from the configuration file, as a YAML list.
func TestTypesFromConfigYAML(t *testing.T) {
	doc := "subagents:\n  - name: fact-checker\n    description: Checks one claim\n    tools: [read_file, \"mcp__web__*\"]\n    schema:\n      type: object\n      required: [verdict]\n"
	var cfg struct {
		Subagents []subagent.Type `yaml:"subagents"`
	}
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	got := cfg.Subagents
	if len(got) != 1 || got[0].Name != "fact-checker" || len(got[0].Tools) != 2 || string(got[0].Schema) != `{"required":["verdict"],"type":"object"}` {
		t.Fatalf("types = %+v (schema %s)", got, got[0].Schema)
	}
	if err := yaml.Unmarshal([]byte("subagents:\n  - name: x\n    tool: [ls]\n"), &cfg); err == nil || !strings.Contains(err.Error(), `unknown field "tool"`) {
		t.Fatalf("a misspelt key must be an error: %v", err)
	}
}
